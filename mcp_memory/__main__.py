"""`python -m mcp_memory` runs the same CLI as the `mcp-memory` script.

For an environment whose scripts folder is not on PATH: the interpreter alone is enough.
"""

from mcp_memory.cli.entry import main

if __name__ == "__main__":
    main()

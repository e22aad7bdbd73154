"""`python -m mcp_memory` runs the same CLI as the `mcp-memory` script."""

from mcp_memory.cli.entry import main

if __name__ == "__main__":
    main()

"""mcp-memory: an MCP server that gives AI agents a memory that outlives a run.

Importing this package is cheap on purpose: nothing heavy (onnxruntime, boto3,
psycopg) is imported until a command needs it.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]

"""The core: MemoryService and the pure parts it is written with (recall, ranking, dedup, ...).

Why one room: every edge (tools, CLI, hooks, web view) and every backend meets the same policy
here, written once; nothing in it knows MCP, HTTP, Typer or a driver (tests/test_layers.py).
"""

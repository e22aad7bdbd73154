"""The server edge, in rooms: protocol/ (the MCP protocol: tools, rendering, prompts and
resources), http/ (HTTP hosting: the app, auth, OAuth, connection limits, backpressure,
metrics), hooks/ (the serving process's side of the Claude Code hooks), runners/ (the stdio
and HTTP processes); and two files every room may read: bounded_json.py (JSON we parse
ourselves, held to a size and a depth) and budget.py (how much an injection of memories may
hold: the protocol's context and the hooks' questions share it).

A thin edge over MemoryService: tools coerce JSON and word errors in the model's terms; what a
tool does is the service's (docs/tools.md).
"""

"""The server edge, in rooms: protocol/ (the MCP protocol: tools, rendering, prompts and
resources), http/ (HTTP hosting: the app, auth, OAuth, connection limits, backpressure,
metrics), hooks/ (the serving process's side of the Claude Code hooks), runners/ (the stdio
and HTTP processes), and bounded_json.py (JSON we parse ourselves, held to a size and a depth).

A thin edge over MemoryService: tools coerce JSON and word errors in the model's terms; what a
tool does is the service's (docs/tools.md).
"""

"""The `mcp-memory` command line: the servers, the operator's commands and the Claude Code hooks.

A thin edge over MemoryService (sqlite-utils' CLI over its library): each command coerces flags
and prints; what it does is the service's. Heavy modules load inside the commands, so `--help`
and a hook start fast.
"""

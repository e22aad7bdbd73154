"""`mcp-memory hook EVENT`, the Claude Code hooks' command (docs/hooks.md): command.py parses the
event and asks the serving process on its socket, state.py keeps each session's state, and
fallback.py answers in this process when nothing listens. The hook process imports this
package before anything else, so it holds nothing.
"""

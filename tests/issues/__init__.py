"""Regressions named after the story that found them (an issue, a polish round), not after one
behaviour, kept apart as the MCP SDK keeps its tests/issues/; a file named for an issue starts
with its number."""

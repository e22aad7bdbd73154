"""The MCP edge: the tool catalogue, rendering, the stdio and HTTP runners, auth, limits, metrics, hooks.

A thin edge over MemoryService: tools coerce JSON and word errors in the model's terms; what a
tool does is the service's (docs/tools.md).
"""

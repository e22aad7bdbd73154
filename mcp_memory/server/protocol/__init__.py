"""The MCP protocol: what a model sees and what it may call. The tool catalogue and layer
(catalogue.py, tools.py), the text and the structured fields a tool returns (render.py,
structured.py, quoting.py), the text injected as context (context.py, held to server/budget.py,
which the hooks share), prompts and resources (resources.py), search_docs, and the SDK server over them
(server.py). Both runners serve it; nothing here knows HTTP or a socket.
"""

"""Hosting MCP over HTTP (docs/http.md, docs/operations.md): the app and the checks in front of
`/mcp` (app.py), the listening sockets, uvicorn and the graceful stop (serve.py), connection
timeouts and sizes (connections.py), the per-tenant rate and concurrency caps
(backpressure.py), the static key and OAuth 2.1 (auth.py, oauth.py, introspection.py,
oauth_check.py), the caller's headers (headers.py), and Prometheus metrics (metrics.py,
metrics_endpoint.py).
"""

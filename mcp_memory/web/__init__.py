"""The web view: browse, search and curate one tenant's memories in a browser (docs/web.md).

`mcp-memory ui` serves it for the local store on 127.0.0.1 behind a one-time token; serve-http
mounts it at /ui behind the static key when UI_ENABLED=1. Starlette and Jinja2 load only here,
never on the stdio path.
"""

"""The web view's pages, a module per route family (docs/web.md): each page is a plain
`async def page(ctx) -> Response` made an endpoint by `endpoint.guarded`; app.py lists the routes."""

"""Export (docs/web.md#curate): what the view shows, as JSONL ready for `mcp-memory import`."""

from __future__ import annotations

from starlette.responses import PlainTextResponse, Response

from mcp_memory.web.endpoint import Ctx, guarded


@guarded("ui.export")
async def export(ctx: Ctx) -> Response:
    lines: list[str] = []
    await ctx.view.service.export_visible(ctx.caller, write=lines.append)
    body = "".join(line if line.endswith("\n") else line + "\n" for line in lines)
    name = f"mcp-memory-{ctx.caller.tenant}.jsonl".replace('"', "")
    return PlainTextResponse(
        body,
        media_type="application/x-ndjson",
        headers={"content-disposition": f'attachment; filename="{ascii_name(name)}"'},
    )


def ascii_name(name: str) -> str:
    """`name` safe in a Content-Disposition header: ASCII letters, digits and `-_.` only."""
    return "".join(c if c.isascii() and (c.isalnum() or c in "-_.") else "_" for c in name)

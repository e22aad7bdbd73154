"""The console script: `mcp-memory hook ...` runs the hook without loading the Typer app
(docs/hooks.md#how-it-is-fast); `serve-stdio` first marks itself starting for the hooks
(cli/hooks/command.py mark_serve_stdio_starting), then loads its own command only (cli/stdio.py); every other
command goes to cli/app.py, but `stats`, `list`, `forget`, `recall` and `remember` are first offered
to cli/quick.py, which runs the common command lines of these five without Typer."""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # not typing's: importing typing costs every hook process (docs/hooks.md#how-it-is-fast)
if TYPE_CHECKING:
    from typing import NoReturn


def main() -> None:
    args = sys.argv[1:]
    if args[:1] == ["hook"] and not {"-h", "--help"} & set(args[1:]):
        from mcp_memory.cli.hooks.command import main as hook

        _end_at_once(hook(args[1:]))
    if args[:1] == ["serve-stdio"] and not {"-h", "--help"} & set(args[1:]):
        import os

        from mcp_memory.cli.hooks.command import mark_serve_stdio_starting

        mark_serve_stdio_starting(args[1:], os.environ)  # before the app loads (docs/hooks.md#a-sessions-first-seconds)
        from mcp_memory.cli import stdio  # noqa: F401  its command alone: the other commands' modules stay unread
        from mcp_memory.cli.common import run_app

        run_app()
        return
    if args[:1] in (["stats"], ["list"], ["forget"], ["recall"], ["remember"]):
        from mcp_memory.cli.quick import run

        code = run(args)
        if code is not None:
            raise SystemExit(code)
    from mcp_memory.cli.app import main as app

    app()


def _end_at_once(code: int) -> NoReturn:
    """End the hook's process once its answer is out, without the interpreter's teardown of every
    module it loaded: a few milliseconds of each hook, which holds nothing to close (its store, if it
    opened one, is closed; bench/RESULTS.md, "The hook's command line, imports and time")."""
    import os

    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)

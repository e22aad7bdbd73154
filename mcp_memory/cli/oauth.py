"""`mcp-memory oauth check`: would serve-http accept this token, and if not, why
(server/http/oauth_check.py; docs/oauth.md#checking-a-setup).

Why: a refused token reaches a client as a bare 401; an operator needs the reason before the
clients do, from the same settings the server would run with.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Annotated, Literal

import typer

from mcp_memory.cli.common import EXIT_FAILED, EXIT_USAGE, _fail, _settings, app

#: A token is read whole, then cut at its first line break; nothing longer is a bearer token.
TOKEN_MAX_CHARS = 16_384


def _read_token(source: str) -> str:
    """The token from a file or stdin (`-`): never from an argument, which `ps` would show."""
    try:
        raw = sys.stdin.read(TOKEN_MAX_CHARS + 1) if source == "-" else Path(source).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        _fail(f"error: cannot read the token from {source}: {getattr(exc, 'strerror', None) or exc}", EXIT_USAGE)
    token = raw.strip()
    if not token:
        _fail(f"error: --token-file {source} holds no token", EXIT_USAGE)
    if len(token) > TOKEN_MAX_CHARS or any(ch.isspace() for ch in token):
        _fail(
            f"error: --token-file {source} does not hold one token (at most {TOKEN_MAX_CHARS} characters, "
            "no spaces or line breaks inside)",
            EXIT_USAGE,
        )
    return token


@app.command(short_help="Check the OAuth settings, the issuer, and a token.")
def oauth(
    action: Annotated[Literal["check"], typer.Argument(help="check: the only action.", show_default=False)],
    token_file: Annotated[
        str | None,
        typer.Option(
            "--token-file",
            metavar="FILE",
            help="A file holding the access token to check, or - to read it from stdin.",
            show_default=False,
        ),
    ] = None,
    tenant: Annotated[
        str | None,
        typer.Option("--tenant", "-t", help="Also say whether the token may use this tenant.", show_default=False),
    ] = None,
) -> None:
    """Read the OAuth settings serve-http would use, fetch the issuer's metadata and signing
    keys, and, given a token, say whether serve-http would accept it and why not (issuer,
    audience, expiry, signature, scopes, tenant claim). Exits 1 when the token is refused or
    can do nothing; the token and the client secret are never printed.
    """
    from mcp_memory.server.http.oauth_check import check

    settings = _settings()
    if settings.serve.oauth is None:
        _fail(
            "error: OAuth is not configured: set MCP_OAUTH_ISSUER, MCP_OAUTH_JWKS_URL and MCP_RESOURCE_URL "
            "(docs/oauth.md)",
            EXIT_USAGE,
        )
    token = _read_token(token_file) if token_file is not None else None
    try:
        report = asyncio.run(check(settings.serve.oauth, token, tenant.strip() if tenant else None))
    except Exception as exc:  # e.g. the oauth extra missing: a StartupError says which
        _fail(f"error: {exc}", EXIT_FAILED)
    for line in report.lines:
        typer.echo(line)
    if report.accepted is False or report.useless:
        raise typer.Exit(EXIT_FAILED)

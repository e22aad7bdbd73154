"""Shell completion scripts for bash, zsh and fish, generated from the Typer app.

The scripts are static: every command, option and known option value is written
into them, so pressing Tab never starts Python. (Typer's own completion, whose
script runs `mcp-memory` on every Tab and whose options change shape with the
environment, is switched off in the app: `add_completion=False`.) The price is
that they go stale when a command changes, so a test compares them with the app. To regenerate, from the
repository root:

    python -m mcp_memory.cli.completions           # rewrite completions/
    python -m mcp_memory.cli.completions --check   # exit 1 when a file is stale

Generation is deterministic: no paths, no environment, commands in name order.
"""

from __future__ import annotations

import sys
from pathlib import Path

from mcp_memory.cli.shell_scripts import (  # the generator, re-exported for the tests
    FILES,
    REGENERATE,
    Cmd,
    Opt,
    bash,
    describe,
    fish,
    scripts,
    zsh,
)

__all__ = ["FILES", "REGENERATE", "Cmd", "Opt", "bash", "describe", "fish", "main", "render", "scripts", "stale", "zsh"]


# --------------------------------------------------------------------------- files


def render() -> dict[str, str]:
    """File name → script, for every shell, for the `mcp-memory` app."""
    from mcp_memory.cli.app import app

    return scripts(app)


def checkout_directory() -> Path:
    """`completions/` of the checkout this module runs from."""
    return Path(__file__).resolve().parents[2] / "completions"


def stale(directory: Path) -> list[str]:
    """The files in `directory` that differ from what the app generates now."""
    wanted = render()
    return [
        name
        for name, text in wanted.items()
        if not (directory / name).is_file() or (directory / name).read_text(encoding="utf-8") != text
    ]


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    check = "--check" in args
    args = [a for a in args if a != "--check"]
    directory = Path(args[0]) if args else checkout_directory()
    if not args and not (directory.parent / "pyproject.toml").is_file():
        print("not run from a checkout: give the directory to write the scripts to", file=sys.stderr)
        return 2
    if check:
        outdated = stale(directory)
        for name in outdated:
            print(f"{directory / name} is stale: run `{REGENERATE}` from the repository root", file=sys.stderr)
        return 1 if outdated else 0
    directory.mkdir(parents=True, exist_ok=True)
    for name, text in render().items():
        (directory / name).write_text(text, encoding="utf-8", newline="\n")
        print(f"wrote {directory / name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

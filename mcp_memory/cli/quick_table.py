"""Writes cli/quick_options.py, the options of `stats`, `list`, `forget`, `recall` and `remember` as cli/app.py
declares them to Typer, for cli/quick.py to read those commands' plain command lines without
importing Typer; and cli/hooks/__init__.py, the `hook` command's event, options and usage line
as cli/app.py declares them, for the hook process (cli/hooks/command.py) to read its command line
without Typer: one definition of each option (its Typer declaration), and tables made from it.

    python -m mcp_memory.cli.quick_table           # rewrite both (then ruff format them)
    python -m mcp_memory.cli.quick_table --check   # exit 1 when either is stale

tests/cli/test_quick_options.py fails while a table is stale (bench/RESULTS.md, "One CLI
parser"). Generation is deterministic: the commands and their parameters in declaration order.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, get_args

#: The commands cli/quick.py may run without Typer: what they read does not grow with the tenant, or
#: (recall, remember) a running serve-stdio reads it (docs/cli.md#a-running-server-answers).
QUICK = ("stats", "list", "forget", "recall", "remember")
TABLE = Path(__file__).with_name("quick_options.py")
HOOK_TABLE = Path(__file__).with_name("hooks") / "__init__.py"

HEADER = '''"""The options of `stats`, `list`, `forget`, `recall` and `remember`, as cli/app.py declares them to Typer: written by
`python -m mcp_memory.cli.quick_table` (do not edit; tests/cli/test_quick_options.py fails while
it is stale). cli/quick.py reads their plain command lines with it, without importing Typer.

Per command: `valued` (each spelling of an option that takes a value -> the callback's parameter),
`flags` (the same for a flag), `arguments` (the positional parameters, in order), `multiple`
(options that may repeat), `integers` (options Typer reads as an int), `choices` (an option's
allowed values) and `defaults` (every parameter's default).
"""

from typing import Any
'''


HOOK_HEADER = '''"""`mcp-memory hook EVENT`, the Claude Code hooks' command (docs/hooks.md): command.py parses the
event and asks the serving process on its socket, codex.py reads Codex CLI's payloads, and
fallback.py answers in this process when nothing listens.

HOOK below is the `hook` command's event and options as cli/app.py declares them to Typer, written
by `python -m mcp_memory.cli.quick_table` (do not edit; tests/cli/test_quick_options.py fails
while it is stale): the hook process reads its command line with it (command.py parse), without
importing Typer or another module. The keys are cli/quick_options.py's, and `usage`, the line a
refused command line is logged with.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: importing typing costs every hook process (docs/hooks.md#how-it-is-fast)
if TYPE_CHECKING:
    from typing import Any
'''


def _group() -> Any:
    """The Typer app's click group, its values named as in help (`--tenant NAME`)."""
    import typer.main

    from mcp_memory.cli.app import app
    from mcp_memory.cli.common import plain_help

    return plain_help(typer.main.get_command(app))


def table() -> dict[str, dict[str, Any]]:
    """The quick commands' parameters, from the Typer app's click commands."""
    group = _group()
    return {name: _row(group.commands[name]) for name in QUICK}


def hook_table() -> dict[str, Any]:
    """The `hook` command's parameters, and the usage line its refusals are logged with: the
    argument's choices in braces, then each option with its value as help names it."""
    command = _group().commands["hook"]
    row = _row(command)
    pieces = []
    for param in command.params:
        choices = row["choices"].get(param.name)
        value = "{" + ",".join(choices) + "}" if choices else param.metavar
        if param.param_type_name == "argument":
            pieces.append(value)
        else:
            pieces.append(f"[{param.opts[0]}]" if param.is_flag else f"[{param.opts[0]} {value}]")
    row["usage"] = f"usage: mcp-memory hook {' '.join(pieces)}"
    return row


def _row(command: Any) -> dict[str, Any]:
    """One command's parameters, as cli/quick_options.py's header describes them."""
    entry: dict[str, Any] = {
        "valued": {},
        "flags": {},
        "arguments": [],
        "multiple": [],
        "integers": [],
        "choices": {},
        "defaults": {},
    }
    for param in command.params:
        descriptor = param.type_descriptor
        entry["defaults"][param.name] = param.default
        if descriptor.is_choice:
            entry["choices"][param.name] = [str(getattr(c, "value", c)) for c in descriptor.choices]
        if param.param_type_name == "argument":
            entry["arguments"].append(param.name)
            continue
        kind = "flags" if param.is_flag else "valued"
        entry[kind].update({spelling: param.name for spelling in [*param.opts, *param.secondary_opts]})
        if param.multiple:
            entry["multiple"].append(param.name)
        if descriptor.annotation is int or set(get_args(descriptor.annotation)) == {int, type(None)}:
            entry["integers"].append(param.name)
    return entry


def render() -> str:
    lines = [HEADER, "COMMANDS: dict[str, dict[str, Any]] = {"]
    for name, entry in table().items():
        lines.append(f"    {name!r}: {{")
        for key, value in entry.items():
            lines.append(f"        {key!r}: {value!r},")
        lines.append("    },")
    lines.append("}")
    return "\n".join(lines) + "\n"


def render_hook() -> str:
    lines = [HOOK_HEADER, "HOOK: dict[str, Any] = {"]
    for key, value in hook_table().items():
        lines.append(f"    {key!r}: {value!r},")
    lines.append("}")
    return "\n".join(lines) + "\n"


def stale() -> list[Path]:
    """The written tables that no longer hold what the Typer app declares (compared as values:
    `ruff format` may lay a written file out otherwise)."""
    from mcp_memory.cli.hooks import HOOK
    from mcp_memory.cli.quick_options import COMMANDS

    return [path for path, same in ((TABLE, COMMANDS == table()), (HOOK_TABLE, HOOK == hook_table())) if not same]


def main(argv: list[str]) -> int:
    if "--check" in argv:
        paths = stale()
        for path in paths:
            print(f"{path} is stale: python -m mcp_memory.cli.quick_table", file=sys.stderr)
        return 1 if paths else 0
    TABLE.write_text(render(), encoding="utf-8")
    HOOK_TABLE.write_text(render_hook(), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

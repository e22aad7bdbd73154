"""Writes cli/quick_options.py, the options of `stats`, `list`, `forget`, `recall` and `remember` as cli/app.py
declares them to Typer, for cli/quick.py to read those commands' plain command lines without
importing Typer: one definition of each option (its Typer declaration), and a table made from it.

    python -m mcp_memory.cli.quick_table           # rewrite mcp_memory/cli/quick_options.py (then ruff format it)
    python -m mcp_memory.cli.quick_table --check   # exit 1 when it is stale

tests/cli/test_quick_options.py fails while the table is stale (bench/RESULTS.md, "One CLI
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


def table() -> dict[str, dict[str, Any]]:
    """The quick commands' parameters, from the Typer app's click commands."""
    import typer.main

    from mcp_memory.cli.app import app

    group: Any = typer.main.get_command(app)
    commands: dict[str, dict[str, Any]] = {}
    for name in QUICK:
        entry: dict[str, Any] = {
            "valued": {},
            "flags": {},
            "arguments": [],
            "multiple": [],
            "integers": [],
            "choices": {},
            "defaults": {},
        }
        for param in group.commands[name].params:
            descriptor = param.type_descriptor
            entry["defaults"][param.name] = param.default
            if param.param_type_name == "argument":
                entry["arguments"].append(param.name)
                continue
            kind = "flags" if param.is_flag else "valued"
            entry[kind].update({spelling: param.name for spelling in [*param.opts, *param.secondary_opts]})
            if param.multiple:
                entry["multiple"].append(param.name)
            if descriptor.annotation is int or set(get_args(descriptor.annotation)) == {int, type(None)}:
                entry["integers"].append(param.name)
            if descriptor.is_choice:
                entry["choices"][param.name] = [str(getattr(c, "value", c)) for c in descriptor.choices]
        commands[name] = entry
    return commands


def render() -> str:
    lines = [HEADER, "COMMANDS: dict[str, dict[str, Any]] = {"]
    for name, entry in table().items():
        lines.append(f"    {name!r}: {{")
        for key, value in entry.items():
            lines.append(f"        {key!r}: {value!r},")
        lines.append("    },")
    lines.append("}")
    return "\n".join(lines) + "\n"


def stale() -> bool:
    """True when the written table no longer holds what the Typer app declares (compared as
    values: `ruff format` may lay the written file out otherwise)."""
    from mcp_memory.cli.quick_options import COMMANDS

    return bool(COMMANDS != table())


def main(argv: list[str]) -> int:
    if "--check" in argv:
        if stale():
            print(f"{TABLE} is stale: python -m mcp_memory.cli.quick_table", file=sys.stderr)
            return 1
        return 0
    TABLE.write_text(render(), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

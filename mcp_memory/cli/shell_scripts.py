"""The completion scripts for bash, zsh and fish, generated from a Typer app: static text
(every command, option and known value written in), so pressing Tab never starts Python.

`scripts(app)` is what `mcp-memory completion` prints; cli/completions.py keeps the
repository's copies in completions/ equal to it.
"""

from __future__ import annotations

import typing
from dataclasses import dataclass
from pathlib import Path

PROG = "mcp-memory"
# Every console script in pyproject.toml: the package puts one command on PATH under both names,
# and a script that registered only one would leave the other without completion.
PROGS = ("mcp-memory", "mcp-tenant-memory")
FUNCTION = "_mcp_memory"
REGENERATE = "python -m mcp_memory.cli.completions"
FILES = {"bash": "mcp-memory.bash", "zsh": "_mcp-memory", "fish": "mcp-memory.fish"}
HEADER = f"Generated from the Typer app by `{REGENERATE}`; do not edit by hand."
HELP_TEXT = "Show this message and exit."


@dataclass(frozen=True)
class Opt:
    names: tuple[str, ...]  # short ones first
    help: str
    takes_value: bool
    values: tuple[str, ...] = ()
    files: bool = False
    multiple: bool = False

    @property
    def long(self) -> str:
        return self.names[-1]


@dataclass(frozen=True)
class Cmd:
    name: str
    help: str
    options: tuple[Opt, ...]
    arguments: tuple[str, ...]


def _first_line(text: str | None) -> str:
    return (text or "").strip().split("\n")[0].strip()


def _annotation(param: object) -> object:
    """The Python type behind a Typer parameter, Optional[...] unwrapped."""
    descriptor = getattr(param, "type_descriptor", None)
    annotation = getattr(descriptor, "annotation", None)
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if len(args) == 1 and typing.get_origin(annotation) is not typing.Literal and typing.get_origin(annotation):
        return args[0]
    return annotation


def _choices(param: object) -> tuple[str, ...]:
    """The values of an option typed as a Literal (what the CLI validates and --help shows)."""
    annotation = _annotation(param)
    return tuple(typing.get_args(annotation)) if typing.get_origin(annotation) is typing.Literal else ()


def _option(param: typing.Any) -> Opt:
    names = tuple(sorted([*param.opts, *param.secondary_opts], key=lambda n: (n.startswith("--"), n)))
    takes_value = not param.is_flag
    annotation = _annotation(param)
    path = isinstance(annotation, type) and issubclass(annotation, Path)
    return Opt(
        names,
        _first_line(param.help),
        takes_value,
        _choices(param) if takes_value else (),
        files=takes_value and path,
        multiple=bool(param.multiple),
    )


def describe(app: typing.Any) -> tuple[tuple[Opt, ...], tuple[Cmd, ...]]:
    """The root options and the commands of a Typer app, as the scripts need them."""
    import typer.main

    group: typing.Any = typer.main.get_command(app)
    help_names = tuple(sorted(group.context_settings.get("help_option_names", ["--help"]), key=len))
    help_opt = Opt(help_names, HELP_TEXT, False)
    root = tuple(_option(p) for p in group.params if not p.hidden) + (help_opt,)
    commands = []
    for name in sorted(group.commands):
        command = group.commands[name]
        if command.hidden:
            continue
        options = [_option(p) for p in command.params if not p.hidden and p.param_type_name == "option"]
        arguments = [(p.metavar or p.name).lower() for p in command.params if p.param_type_name == "argument"]
        commands.append(Cmd(name, _first_line(command.help), (*options, help_opt), tuple(arguments)))
    return root, tuple(commands)


# --------------------------------------------------------------------------- bash


def bash(root: tuple[Opt, ...], commands: tuple[Cmd, ...]) -> str:
    words = " ".join([*(n for o in root for n in o.names), *(c.name for c in commands)])
    out = [
        f"# bash completion for {PROG}",
        f"# {HEADER}",
        f"# It completes {' and '.join(PROGS)}. Install: source this file from ~/.bashrc, or copy it to",
        f"# ~/.local/share/bash-completion/completions/{PROG} and link {' and '.join(PROGS[1:])} to it there",
        "# (bash-completion loads a file by the name of the command being completed).",
        "",
        f"{FUNCTION}() {{",
        "    local cur prev cmd i",
        '    cur="${COMP_WORDS[COMP_CWORD]}"',
        '    prev="${COMP_WORDS[COMP_CWORD-1]}"',
        '    if [[ "$prev" == "=" ]]; then prev="${COMP_WORDS[COMP_CWORD-2]}"; cur="${cur#=}"; fi',
        '    cmd=""',
        "    for ((i = 1; i < COMP_CWORD; i++)); do",
        '        case "${COMP_WORDS[i]}" in',
        "            -*) ;;",
        '            *) cmd="${COMP_WORDS[i]}"; break ;;',
        "        esac",
        "    done",
        '    case "$cmd" in',
        '        "")',
        f'            COMPREPLY=($(compgen -W "{words}" -- "$cur"))',
        "            ;;",
    ]
    for command in commands:
        out.append(f"        {command.name})")
        out.append('            case "$prev" in')
        for opt in command.options:
            if not opt.takes_value:
                continue
            pattern = "|".join(opt.names)
            if opt.values:
                action = f'COMPREPLY=($(compgen -W "{" ".join(opt.values)}" -- "$cur")); return'
            elif opt.files:
                action = "return"  # nothing offered: `complete -o default` completes file names
            else:
                action = "compopt +o default 2>/dev/null; return"  # a free value: offer nothing
            out.append(f"                {pattern}) {action} ;;")
        out.append("            esac")
        options = " ".join(n for o in command.options for n in o.names)
        out.append(f'            COMPREPLY=($(compgen -W "{options}" -- "$cur"))')
        out.append("            ;;")
    out += ["    esac", "}", "", f"complete -o default -F {FUNCTION} {' '.join(PROGS)}", ""]
    return "\n".join(out)


# --------------------------------------------------------------------------- zsh


def _zq(text: str) -> str:
    """Text for inside a single-quoted _arguments description."""
    for char in ("\\", "[", "]", ":"):
        text = text.replace(char, "\\" + char)
    return text.replace("'", "'\\''")


def _zsh_option(opt: Opt) -> str:
    description = f"[{_zq(opt.help)}]"
    if opt.long in ("--help", "--version"):
        exclusion = "(- *)"
    elif len(opt.names) > 1:
        exclusion = "(" + " ".join(opt.names) + ")"
    else:
        exclusion = ""
    if opt.multiple:
        exclusion = "*"
    argument = ""
    if opt.takes_value:
        name = opt.long.lstrip("-")
        if opt.values:
            argument = f":{name}:({' '.join(opt.values)})"
        elif opt.files:
            argument = f":{name}:_files"
        else:
            argument = f":{name}: "
    if len(opt.names) > 1:
        return f"'{exclusion}'{{{','.join(opt.names)}}}'{description}{argument}'"
    return f"'{exclusion}{opt.names[0]}{description}{argument}'"


def zsh(root: tuple[Opt, ...], commands: tuple[Cmd, ...]) -> str:
    out = [
        f"#compdef {' '.join(PROGS)}",
        f"# zsh completion for {PROG}",
        f"# {HEADER}",
        f"# It completes {' and '.join(PROGS)}. Install: copy it as _{PROG} into a directory on $fpath,",
        "# then run compinit.",
        "",
        f"{FUNCTION}() {{",
        '    local curcontext="$curcontext" state line',
        "    typeset -A opt_args",
        "    local -a commands",
        "    commands=(",
        *(f"        '{c.name}:{_zq(c.help)}'" for c in commands),
        "    )",
        "    _arguments -C \\",
        *(f"        {_zsh_option(o)} \\" for o in root),
        "        '1: :->command' \\",
        "        '*:: :->args' && return 0",
        "    case $state in",
        "        command)",
        f"            _describe -t commands '{PROG} command' commands",
        "            ;;",
        "        args)",
        "            case $line[1] in",
    ]
    for command in commands:
        specs = [_zsh_option(o) for o in command.options] + [f"':{a}: '" for a in command.arguments]
        out.append(f"                {command.name})")
        out.append("                    _arguments \\")
        out += [f"                        {spec} \\" for spec in specs[:-1]]
        out.append(f"                        {specs[-1]}")
        out.append("                    ;;")
    out += [
        "            esac",
        "            ;;",
        "    esac",
        "}",
        "",
        "if [[ $zsh_eval_context[-1] == loadautofunc ]]; then",
        f'    {FUNCTION} "$@"',
        "else",
        f"    compdef {FUNCTION} {' '.join(PROGS)}",
        "fi",
        "",
    ]
    return "\n".join(out)


# --------------------------------------------------------------------------- fish


def _fq(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _fish_option(prog: str, condition: str, opt: Opt) -> str:
    parts = [f"complete -c {prog} -n {condition}"]
    for name in opt.names:
        parts.append(f"-l {name[2:]}" if name.startswith("--") else f"-s {name[1:]}")
    if opt.takes_value:
        if opt.files:
            parts.append("-r -F")
        else:
            parts.append("-x")
            if opt.values:
                parts.append(f"-a {_fq(' '.join(opt.values))}")
    parts.append(f"-d {_fq(opt.help)}")
    return " ".join(parts)


def fish(root: tuple[Opt, ...], commands: tuple[Cmd, ...]) -> str:
    out = [
        f"# fish completion for {PROG}",
        f"# {HEADER}",
        f"# It completes {' and '.join(PROGS)}. Install: copy it to ~/.config/fish/completions/{PROG}.fish",
        f"# and link {' and '.join(p + '.fish' for p in PROGS[1:])} to it there (fish loads a file by the",
        "# name of the command being completed).",
    ]
    # The same lines for each name: plain `complete` calls, no variables and no --wraps, so every
    # fish version reads them alike.
    for prog in PROGS:
        out += ["", f"complete -c {prog} -f"]
        out += [_fish_option(prog, "__fish_use_subcommand", o) for o in root]
        out += [f"complete -c {prog} -n __fish_use_subcommand -a {c.name} -d {_fq(c.help)}" for c in commands]
        for command in commands:
            condition = _fq(f"__fish_seen_subcommand_from {command.name}")
            out += [_fish_option(prog, condition, o) for o in command.options]
    return "\n".join(out) + "\n"


def scripts(app: typing.Any) -> dict[str, str]:
    """File name → script, for every shell, for this app."""
    root, commands = describe(app)
    return {FILES["bash"]: bash(root, commands), FILES["zsh"]: zsh(root, commands), FILES["fish"]: fish(root, commands)}

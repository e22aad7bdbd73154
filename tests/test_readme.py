"""The README keeps up with the command line: every command is in its table, and every
example command line it shows uses commands and options that exist."""

from __future__ import annotations

import re
import shlex

import typer.main

from mcp_memory.cli.app import app
from tests.conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
GROUP = typer.main.get_command(app)


def options_of(command) -> set[str]:
    return {name for p in command.params for name in (*p.opts, *p.secondary_opts) if name.startswith("-")} | {
        "-h",
        "--help",
    }


def example_lines() -> list[str]:
    blocks = re.findall(r"```(?:bash|sh)\n(.*?)```", README, flags=re.DOTALL)
    lines = []
    for block in blocks:
        for line in block.replace("\\\n", " ").splitlines():  # join continued lines
            line = line.strip()
            if line and not line.startswith(("#", "docker ")):
                lines.append(line)
    return lines


def invocations() -> list[list[str]]:
    """The arguments of each example that runs `mcp-memory` (also after a pipe or `&&`, and
    after variable assignments)."""
    found = []
    for line in example_lines():
        for segment in re.split(r"\s(?:\||&&|;)\s", line):
            words = shlex.split(segment, comments=True)
            while words and re.fullmatch(r"[A-Z_]+=\S*", words[0]):
                words = words[1:]
            if words and (words[0] == "mcp-memory" or words[0].endswith("/mcp-memory")):
                found.append(words[1:])
    return found


def test_every_command_is_in_the_readme_command_table() -> None:
    table = re.findall(r"^\| `([a-z-]+)[^`]*` \|", README, flags=re.MULTILINE)
    missing = sorted(set(GROUP.commands) - set(table))
    assert not missing, f"commands missing from the README's command table: {missing}"


def test_every_example_uses_a_command_and_options_that_exist() -> None:
    seen = set()
    for words in invocations():
        if words[:1] == ["--version"]:
            continue
        assert words and words[0] in GROUP.commands, (
            f"README example runs an unknown command: mcp-memory {' '.join(words)}"
        )
        command = GROUP.commands[words[0]]
        seen.add(words[0])
        for word in words[1:]:
            if word.startswith("-") and word != "-":  # a lone - is stdin
                assert word.split("=")[0] in options_of(command), f"README example: {words[0]} has no option {word}"
    assert {"calibrate", "compact", "stats", "recall", "remember", "serve-stdio"} <= seen


def test_the_readme_says_how_to_install_every_completion_script() -> None:
    # from the installed command, so a pip or uvx user has them without a checkout
    assert "mcp-memory completion bash > ~/.local/share/bash-completion/completions/mcp-memory" in README
    assert "mcp-memory completion zsh > ~/.zfunc/_mcp-memory" in README
    assert "mcp-memory completion fish > ~/.config/fish/completions/mcp-memory.fish" in README
    # the second console script: bash-completion and fish load a file by the command's name
    assert "ln -sf mcp-memory ~/.local/share/bash-completion/completions/mcp-tenant-memory" in README
    assert "ln -sf mcp-memory.fish ~/.config/fish/completions/mcp-tenant-memory.fish" in README
    assert "python -m mcp_memory.cli.completions" in README

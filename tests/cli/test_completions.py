"""The shell completion scripts in completions/: current with the Typer app,
deterministic, complete, and (for bash, which CI always has) actually completing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_memory.cli import completions
from mcp_memory.cli.app import app
from tests.conftest import ROOT

DIRECTORY = ROOT / "completions"


@pytest.mark.parametrize(
    ("shell", "name"), [("bash", "mcp-memory.bash"), ("zsh", "_mcp-memory"), ("fish", "mcp-memory.fish")]
)
def test_the_completion_command_prints_the_script_shipped_in_completions(shell: str, name: str) -> None:
    printed = subprocess.run(
        [sys.executable, "-m", "mcp_memory", "completion", shell],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)},
    )
    assert printed.returncode == 0 and printed.stderr == ""
    assert printed.stdout == (DIRECTORY / name).read_text(encoding="utf-8")


def test_the_completion_command_refuses_another_shell() -> None:
    refused = subprocess.run(
        [sys.executable, "-m", "mcp_memory", "completion", "ksh"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "COLUMNS": "200"},
    )
    assert refused.returncode == 2 and "'ksh' is not one of 'bash', 'zsh', 'fish'" in refused.stderr


def test_the_completion_scripts_are_current() -> None:
    outdated = completions.stale(DIRECTORY)
    assert not outdated, (
        f"completions/ is stale ({', '.join(outdated)}): run `{completions.REGENERATE}` "
        "from the repository root and commit the result"
    )


def test_generation_is_deterministic_and_carries_nothing_from_this_machine(tmp_path: Path) -> None:
    first = completions.render()
    # Another process, another directory, and the variable that would change Typer's own options.
    code = "import json; from mcp_memory.cli.completions import render; print(json.dumps(render()))"
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION": "1"}
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path, check=True
    )
    second = json.loads(result.stdout)
    assert first == second and set(first) == {"mcp-memory.bash", "_mcp-memory", "mcp-memory.fish"}
    for text in first.values():
        assert str(ROOT) not in text and str(Path.home()) not in text and sys.executable not in text


def test_the_cli_offers_no_completion_options_of_its_own_whatever_the_environment() -> None:
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "SHELL": "/bin/bash"}
    for variables in (env, {**env, "_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION": "1"}):
        shown = subprocess.run(
            [sys.executable, "-m", "mcp_memory", "--help"], capture_output=True, text=True, env=variables, check=True
        ).stdout
        assert "--install-completion" not in shown and "--show-completion" not in shown
    refused = subprocess.run(
        [sys.executable, "-m", "mcp_memory", "--install-completion"], capture_output=True, text=True, env=env
    )
    assert refused.returncode == 2 and "No such option: --install-completion" in refused.stderr


def test_every_command_and_option_is_in_every_script() -> None:
    root, commands = completions.describe(app)
    names = {c.name for c in commands}
    assert {"calibrate", "compact", "forget", "list", "recall", "remember", "serve-stdio", "stats"} <= names
    scripts = completions.render()
    for command in commands:
        for text in scripts.values():
            assert command.name in text
        for option in command.options:
            assert all(n in scripts["mcp-memory.bash"] for n in option.names)
            assert option.long in scripts["_mcp-memory"]
            assert f"-l {option.long[2:]}" in scripts["mcp-memory.fish"]


def test_check_mode_names_the_stale_file_and_the_command_that_fixes_it(tmp_path: Path, capsys) -> None:
    assert completions.main([str(tmp_path)]) == 0
    assert completions.main(["--check", str(tmp_path)]) == 0
    (tmp_path / "mcp-memory.fish").write_text("# an old script\n")
    assert completions.main(["--check", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "mcp-memory.fish is stale: run `python -m mcp_memory.cli.completions`" in err


DRIVER = """
source "$1"
shift
COMP_WORDS=("$@")
COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
_mcp_memory
printf '%s\\n' "${COMPREPLY[@]}"
"""


def bash_complete(*words: str) -> list[str]:
    result = subprocess.run(
        ["bash", "-c", DRIVER, "driver", str(DIRECTORY / "mcp-memory.bash"), "mcp-memory", *words],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    )
    return [line for line in result.stdout.splitlines() if line]


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        (
            ("",),
            [
                "--version",
                "-h",
                "--help",
                "backup",
                "calibrate",
                "compact",
                "completion",
                "doctor",
                "export",
                "forget",
                "hook",
                "import",
                "list",
                "oauth",
                "recall",
                "remember",
                "serve-http",
                "serve-stdio",
                "stats",
                "ui",
            ],
        ),
        (("re",), ["recall", "remember"]),
        (("recall", "--mode", ""), ["precision", "balanced", "exploratory"]),
        (("remember", "--type", "p"), ["project", "pattern"]),
        (("remember", "--scope", ""), ["project", "conversation"]),
        (("calibrate", "--b"), ["--builtin"]),
        (("stats", "--all"), ["--all-tenants"]),
        (("recall", "--tenant", ""), []),
        (("calibrate", "--cases", ""), []),  # empty: bash falls back to file names
    ],
)
def test_bash_completes_commands_options_and_values(words: tuple[str, ...], expected: list[str]) -> None:
    assert bash_complete(*words) == expected


def console_scripts() -> list[str]:
    """The command names the package puts on PATH ([project.scripts] in pyproject.toml)."""
    import tomllib

    return sorted(tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"])


def test_the_package_installs_the_command_under_two_names() -> None:
    assert console_scripts() == ["mcp-memory", "mcp-tenant-memory"]


@pytest.mark.parametrize("prog", console_scripts())
def test_bash_completes_the_command_under_every_name_it_is_installed_as(prog: str) -> None:
    registered = subprocess.run(
        ["bash", "-c", f'source "$1"; complete -p {prog}', "driver", str(DIRECTORY / "mcp-memory.bash")],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert registered.returncode == 0, registered.stderr
    assert registered.stdout.strip() == f"complete -o default -F _mcp_memory {prog}"
    result = subprocess.run(
        ["bash", "-c", DRIVER, "driver", str(DIRECTORY / "mcp-memory.bash"), prog, "recall", "--mode", ""],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    )
    assert result.stdout.split() == ["precision", "balanced", "exploratory"]


def test_the_zsh_script_is_autoloaded_and_registered_for_every_name() -> None:
    text = (DIRECTORY / "_mcp-memory").read_text(encoding="utf-8")
    lines = text.splitlines()
    # compinit reads the first line to decide which commands the file completes.
    assert lines[0].split() == ["#compdef", *console_scripts()]
    assert f"    compdef _mcp_memory {' '.join(console_scripts())}" in lines


def test_the_fish_script_gives_every_name_the_same_completions() -> None:
    text = (DIRECTORY / "mcp-memory.fish").read_text(encoding="utf-8")
    by_name: dict[str, list[str]] = {}
    for line in text.splitlines():
        if line.startswith("complete -c "):
            name, _, rest = line.removeprefix("complete -c ").partition(" ")
            by_name.setdefault(name, []).append(rest)
    assert sorted(by_name) == console_scripts()
    first, *others = by_name.values()
    assert len(first) > 50 and all(lines == first for lines in others)


def test_pressing_tab_never_starts_the_command_or_python() -> None:
    """docs/cli.md: the scripts are static. No command substitution runs anything but bash's own
    compgen; zsh's and fish's scripts run no command at all to find a completion."""
    import re

    bash_script = (DIRECTORY / "mcp-memory.bash").read_text(encoding="utf-8")
    assert set(re.findall(r"\$\((\S+)", bash_script)) == {"compgen"}
    assert "`" not in bash_script.replace("`python -m mcp_memory.cli.completions`", "")
    zsh_script = (DIRECTORY / "_mcp-memory").read_text(encoding="utf-8")
    assert "$(" not in zsh_script and "`" not in zsh_script.split("\n", 3)[3]
    fish_script = (DIRECTORY / "mcp-memory.fish").read_text(encoding="utf-8")
    for line in fish_script.splitlines():
        if line.startswith("complete "):  # fish runs `(command)` inside -a and -n values
            assert "(mcp-" not in line and "(python" not in line and "(command" not in line, line
    for text in (bash_script, zsh_script, fish_script):
        for prog in console_scripts():
            assert not re.search(rf"^\s*{prog}\b", text, flags=re.MULTILINE)  # never run as a command

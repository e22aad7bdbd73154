"""The `mcp-memory` console script run inside the test process, through Typer's test runner.

What a user sees of a command is its output, its exit status and what it wrote; none of that
needs a new interpreter, and a new one costs more than most commands do. `run_cli` calls the
console script's own entry point (`mcp_memory.cli.entry.main`, so the command line takes the
same path as in a shell, fast paths included) inside `typer.testing.CliRunner().isolation()`:
for the call, argv, the environment, the working directory, stdin, stdout and stderr are the
command's own, and its `SystemExit` is the exit status. The result has the fields of
`subprocess.CompletedProcess` that the tests read (`returncode`, `stdout`, `stderr`).

A real process stays where the process is the point: start-up time and imports, signals,
stdio framing, pipes that close, the hook, real clients (docs/development.md, "In process").
An exception the command does not turn into an exit status is raised in the test, with its
traceback: a real process would have printed it and exited 1.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import os
import sys
import types
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click.formatting
from typer.testing import CliRunner

#: The variables that choose the store, the model and the caller: a test's environment starts
#: without any the developer's shell may have set, as the subprocess tests' did.
SETTINGS_PREFIXES = ("MEMORY_", "EMBEDDING_", "DATABASE_URL")


@dataclass(frozen=True)
class Ran:
    """What a command left: its exit status and everything it printed (text, or bytes when
    `run_cli` was given `text=False`)."""

    returncode: int
    stdout: Any
    stderr: Any
    #: stdout and stderr interleaved as written, as `stderr=subprocess.STDOUT` gives them
    output: Any = None


def clean_environment(*also: str) -> dict[str, str]:
    """This process's environment without the settings variables (SETTINGS_PREFIXES, and the
    prefixes `also` names)."""
    prefixes = SETTINGS_PREFIXES + also
    return {k: v for k, v in os.environ.items() if not k.startswith(prefixes)}


def run_cli(
    *args: str,
    env: Mapping[str, str] | None = None,
    stdin: str | bytes | None = None,
    cwd: Path | str | None = None,
    text: bool = True,
) -> Ran:
    """Run `mcp-memory ARGS` with exactly the environment `env` (default: this process's),
    `stdin` as its standard input (empty when None) and `cwd` as its working directory; with
    `text=False` its output is given as bytes, as `subprocess.run` without `text` gives it."""
    from mcp_memory.cli.entry import main

    if _loop_running():  # the command runs its own event loop: give it a thread of its own
        with concurrent.futures.ThreadPoolExecutor(1) as worker:
            return worker.submit(run_cli, *args, env=env, stdin=stdin, cwd=cwd, text=text).result()
    environment = dict(os.environ if env is None else env)
    overrides: dict[str, str | None] = {key: None for key in os.environ if key not in environment}
    overrides.update(environment)
    runner = CliRunner()
    with _as_console_script(args), _working_directory(cwd), runner.isolation(input=stdin, env=overrides) as streams:
        out, err, both = streams
        click.formatting.FORCED_WIDTH = None  # the runner's 80; a process reads $COLUMNS (restored on exit)
        # A warning logged with no handler set up reaches a process's stderr (logging.lastResort);
        # here pytest's handlers would take it: the command's stderr gets it, as in a process.
        last_resort = logging.StreamHandler(sys.stderr)
        last_resort.setLevel(logging.WARNING)
        logging.getLogger().addHandler(last_resort)
        try:
            main()
            code = 0
        except SystemExit as done:
            code = _exit_status(done.code)
        finally:
            logging.getLogger().removeHandler(last_resort)
            sys.stdout.flush()
            sys.stderr.flush()
        if not text:
            return Ran(code, out.getvalue(), err.getvalue(), both.getvalue())
        decoded = [stream.getvalue().decode("utf-8", "backslashreplace") for stream in (out, err, both)]
        return Ran(code, *decoded)


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _exit_status(code: object) -> int:
    """The status a process would end with after `raise SystemExit(code)`."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)  # as the interpreter does with a message
    return 1


@contextlib.contextmanager
def _as_console_script(args: tuple[str, ...]) -> Iterator[None]:
    """argv and `__main__` as the installed `mcp-memory` script has them, so usage lines and
    help name the command as a user types it (click reads both for the program's name)."""
    saved_argv, saved_main = sys.argv, sys.modules["__main__"]
    script = types.ModuleType("__main__")
    script.__package__ = None
    sys.argv = [str(Path(sys.executable).parent / "mcp-memory"), *args]
    sys.modules["__main__"] = script
    try:
        yield
    finally:
        sys.argv = saved_argv
        sys.modules["__main__"] = saved_main


@contextlib.contextmanager
def _working_directory(cwd: Path | str | None) -> Iterator[None]:
    if cwd is None:
        yield
        return
    with contextlib.chdir(cwd):
        yield

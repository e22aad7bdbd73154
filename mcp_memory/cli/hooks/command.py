"""`mcp-memory hook EVENT`: a Claude Code hook, reading the event's JSON on stdin (docs/hooks.md).

It runs before every prompt, so it is small on purpose: it imports the standard library and
the hooks' wire and folder (server/hooks/), asks the serving process on its socket (server/hooks/listener.py), and only
when nothing listens there opens the store itself, in a thread it waits MEMORY_HOOK_TIMEOUT_MS
for (1 s; SessionStart 4 s), looking again for the socket meanwhile. A serving process still
starting is waited for up to STARTING_WAIT_MS (docs/hooks.md#a-sessions-first-seconds). Whatever happens it exits 0: a failure is one JSON line on stderr (Claude Code's debug
log), stdout holds only the documented JSON, or nothing at all when nothing qualifies.

The tenant and conversation come from --tenant / MEMORY_TENANT / "local" and --conversation /
MEMORY_CONVERSATION, never from the payload; --conversation-from-session takes Claude Code's
session id as the conversation.
"""

from __future__ import annotations

import _socket  # the C module: `socket` would import selectors and more, on every prompt
import json
import os
import sys
import time

from mcp_memory.cli.hooks import HOOK
from mcp_memory.server.hooks import folder
from mcp_memory.server.hooks.events import (  # noqa: F401 - the names the hook's tests and entry points read here
    CAPTURE_AFTER_PROMPTS,
    CAPTURE_REASON,
    DEFAULT_TIMEOUT_MS,
    STARTING_SECONDS,
    STARTING_WAIT_MS,
    HookSettings,
    Options,
    caller_of,
    handle,
    log,
)
from mcp_memory.server.hooks.wire import TOOL_EVENTS, Ask

TYPE_CHECKING = False  # not typing's: importing typing costs every hook process (docs/hooks.md#how-it-is-fast)
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from pathlib import Path
    from typing import Any

FALLBACK_SECONDS = DEFAULT_TIMEOUT_MS / 1000
#: How often a hook answering itself looks whether a serving process has started listening.
LOOK_AGAIN_SECONDS = 0.1
#: How long a prompt with nothing listening looks for serve-stdio's marker before loading the model
#: itself (a serve-stdio started at the same moment writes it within a fraction of a second).
PROMPT_LOOKS_FIRST_SECONDS = 0.3
#: The most of stdin a hook reads: a prompt is at most this long, and so is the rest of the payload.
STDIN_BYTES_MAX = 4 * 1024 * 1024
#: A tool event's payload carries the call's whole input (a Write's file content), of which the
#: hook reads only the path or the command: it reads this much so a large file's write still parses.
TOOL_STDIN_BYTES_MAX = 32 * 1024 * 1024

#: The events the hook answers, whose payloads `--client` names (docs/hooks.md#codex), and the line
#: a refused command line is logged with: cli/app.py's declaration of `hook`, read from its table (cli/hooks/__init__.py).
EVENTS: tuple[str, ...] = tuple(HOOK["choices"]["event"])
CLIENTS: tuple[str, ...] = tuple(HOOK["choices"]["client"])
USAGE: str = HOOK["usage"]


class Usage(Exception):
    pass


def parse(argv: Sequence[str]) -> Options:
    """The event (before or after the options) and the options, as `hook`'s table reads them (its
    Typer declaration, cli/hooks/__init__.py); Usage names what is wrong. An option's value comes
    inline (`--tenant=acme`, also `-t=acme`) or as the next word; given twice, the last counts."""
    valued, flags, (argument,), choices = HOOK["valued"], HOOK["flags"], HOOK["arguments"], HOOK["choices"]
    given = dict(HOOK["defaults"])
    args = list(argv)
    while args:
        arg = args.pop(0)
        name, equals, inline = arg.partition("=")
        if name in valued:
            if not equals and not args:
                raise Usage(f"{name} needs a value")
            value = inline if equals else args.pop(0)
            if value not in choices.get(valued[name], (value,)):
                raise Usage(f"{name} must be one of {', '.join(choices[valued[name]])}")
            given[valued[name]] = value
        elif arg in flags:
            given[flags[arg]] = True
        elif not given[argument] and not arg.startswith("-"):
            given[argument] = arg
        else:
            raise Usage(f"unknown option {name}")
    if given[argument] not in choices[argument]:
        raise Usage(f"{argument.upper()} must be one of {', '.join(choices[argument])}")
    if given["client"] == "codex" and given[argument] == "PostToolUseFailure":
        raise Usage("Codex sends no PostToolUseFailure event")
    return Options(**given)


def read_payload(stream: Any, hook: str) -> dict[str, Any]:
    """The event's JSON object; {} for an empty, malformed or non-object stdin (logged)."""
    most = TOOL_STDIN_BYTES_MAX if hook in TOOL_EVENTS else STDIN_BYTES_MAX
    try:
        raw = stream.buffer.read(most) if hasattr(stream, "buffer") else stream.read().encode()
    except (OSError, ValueError):
        raw = b""
    if not raw.strip():
        log("hook_empty_input", hook)
        return {}
    try:
        data = json.loads(raw.decode("utf-8", "replace"))
    except (ValueError, RecursionError):  # RecursionError: nested a few thousand levels deep
        log("hook_malformed_input", hook)
        return {}
    if not isinstance(data, dict):
        log("hook_malformed_input", hook)
        return {}
    return data


# --------------------------------------------------------------------------- asking


class Unreachable(Exception):
    """Nothing listens on the socket (or it refused the question): the hook answers itself."""


def ask_socket(ask: Ask, path: Path, deadline: float, starting_deadline: float) -> tuple[str | None, list[str]]:
    """The serving process's answer by `deadline` (time.monotonic), or by `starting_deadline` when
    its marker says it is still starting. Unreachable when nothing listens or it refused; NotOurs
    when the socket's folder is not this user's own (whatever listens there is not this user's server)."""
    if not folder.own_folder(path.parent):
        raise Unreachable("FileNotFoundError")
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            sock.connect(str(path))
        except (FileNotFoundError, ConnectionRefusedError, NotADirectoryError) as exc:
            raise Unreachable(type(exc).__name__) from None
        if folder.server_starting(path):
            deadline = max(deadline, starting_deadline)
        sock.sendall(ask.to_line())
        chunks: list[bytes] = []
        while not chunks or not chunks[-1].endswith(b"\n"):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError
            sock.settimeout(remaining)
            chunk = sock.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        sock.close()
    reply = json.loads(b"".join(chunks) or b"{}")
    if not isinstance(reply, dict) or reply.get("ok") is not True:
        raise Unreachable("refused")
    text = reply.get("text")
    ids = reply.get("ids")
    return (text if isinstance(text, str) and text else None), [i for i in ids or [] if isinstance(i, str)]


class Here:
    """This process's own answer, worked out in a thread (opening the store, perhaps loading the model)."""

    def __init__(self, ask: Ask, environ: Mapping[str, str]) -> None:
        import threading

        self.outcome: list[Any] = []
        self.thread = threading.Thread(target=self._work, args=(ask, environ), name="hook-fallback", daemon=True)
        self.thread.start()
        _THREADS.append(self.thread)

    def _work(self, ask: Ask, environ: Mapping[str, str]) -> None:
        import asyncio

        from mcp_memory.cli.hooks.fallback import answer_here

        try:
            self.outcome.append(asyncio.run(answer_here(ask, environ)))
        except BaseException as exc:  # reported by the waiting thread
            self.outcome.append(exc)

    def result(self, seconds: float) -> tuple[str | None, list[str]] | None:
        """The answer, if it comes within `seconds`; re-raises what the thread raised."""
        self.thread.join(max(0.0, seconds))
        if not self.outcome:
            return None
        self.thread.join()  # its outcome is in: it is only returning (main ends a running one at once)
        if isinstance(self.outcome[0], BaseException):
            raise self.outcome[0]
        result: tuple[str | None, list[str]] = self.outcome[0]
        return result


#: The answering threads of this process: one still running at exit ends it at once (main).
_THREADS: list[Any] = []


def ask(
    question: Ask, hook: str, environ: Mapping[str, str], seconds: float, starting_seconds: float | None = None
) -> tuple[str | None, list[str]]:
    """The serving process's answer, else this process's, within `seconds` (`starting_seconds` for
    a serving process still starting), else nothing. While this process works out its own answer it
    looks again for a serving process every LOOK_AGAIN_SECONDS: one that starts listening meanwhile
    (a session's first seconds) answers instead."""
    started = time.monotonic()
    deadline = started + seconds
    starting_deadline = started + max(seconds, starting_seconds or 0.0)
    path = folder.socket_path(question.tenant, environ)
    try:
        return ask_socket(question, path, deadline, starting_deadline)
    except Unreachable:
        pass
    except folder.NotOurs:
        raise  # main says so
    except (OSError, ValueError) as exc:
        log("hook_server_failed", hook, reason=type(exc).__name__)
        return None, []
    here: Here | None = None
    while True:
        starting = folder.server_starting(path)
        if starting and deadline < starting_deadline:  # serve-stdio is on its way
            deadline = starting_deadline
        # a prompt or tool call answered here loads the model: not while serve-stdio, loading it too, is on its way
        looking_first = time.monotonic() < started + PROMPT_LOOKS_FIRST_SECONDS
        if here is None and not (question.kind in ("prompt", "tool") and (starting or looking_first)):
            here = Here(question, environ)
        wait = max(0.0, min(LOOK_AGAIN_SECONDS, deadline - time.monotonic()))
        if here is None:
            time.sleep(wait)
        else:
            result = here.result(wait)
            if result is not None:
                return result
        if os.path.exists(path):
            try:
                return ask_socket(question, path, deadline, starting_deadline)
            except Unreachable:
                pass
            except folder.NotOurs as exc:
                log("hook_folder_refused", hook, reason=exc.reason)
                raise TimedOut from None
            except (OSError, ValueError) as exc:
                log("hook_server_failed", hook, reason=type(exc).__name__)
                raise TimedOut from None
        if time.monotonic() >= deadline:
            log("hook_timed_out", hook, seconds=seconds)
            raise TimedOut


def mark_serve_stdio_starting(args: Sequence[str], environ: Mapping[str, str]) -> None:
    """serve-stdio's first act (cli/entry.py): its marker beside the hook socket of its store and
    tenant, before its app loads, so that a session's first prompt waits for it rather than giving
    up (docs/hooks.md#a-sessions-first-seconds). Best effort: its hook socket takes the marker over
    or removes it; a marker of a process that has gone is ignored."""
    tenant = None
    for i, arg in enumerate(args):
        name, equals, inline = arg.partition("=")
        if name in ("--tenant", "-t"):
            tenant = inline if equals else (args[i + 1] if i + 1 < len(args) else None)
    try:
        chosen, _ = caller_of(Options("SessionStart", tenant), {}, environ)
        folder.EARLY_MARKER = folder.mark_starting(folder.socket_path(chosen, environ))
    except (OSError, ValueError):
        pass


class TimedOut(Exception):
    """The hook's own answer did not come in time: the process ends at once (its thread may hold the store)."""


# --------------------------------------------------------------------------- the events


def main(
    argv: Sequence[str], *, stdin: Any = None, stdout: Any = None, environ: Mapping[str, str] | None = None
) -> int:
    """Run one hook; always 0 (docs/hooks.md#failures)."""
    out = stdout or sys.stdout
    env = os.environ if environ is None else environ
    try:
        options = parse(argv)
    except Usage as exc:
        named = [a for a in argv if a in EVENTS]
        log("hook_usage", named[0] if named else None, message=str(exc), usage=USAGE)
        return 0
    payload = read_payload(stdin or sys.stdin, options.event)
    if options.client == "codex":
        from mcp_memory.cli.hooks.codex import as_claude_code

        payload = as_claude_code(options.event, payload)
    try:
        result = handle(options, payload, env, ask)
    except TimedOut:
        _flush_and_exit(out)
        return 0
    except folder.NotOurs as exc:  # the socket's or the session state's folder: not this user's own
        log("hook_folder_refused", options.event, reason=exc.reason)
        return 0
    except ValueError as exc:  # a tenant or conversation that cannot be used: said once, nothing injected
        log("hook_context_refused", options.event, message=str(exc))
        return 0
    except Exception as exc:
        setting = _setting_refused(exc)
        if setting is not None:  # which variable to fix; its value is never logged (it may be a secret)
            log("hook_failed", options.event, reason=type(exc).__name__, setting=setting)
        else:
            log("hook_failed", options.event, reason=type(exc).__name__)
        return 0
    if result is not None:
        out.write(json.dumps(result, separators=(",", ":")) + "\n")
        out.flush()
    if any(thread.is_alive() for thread in _THREADS):  # its own answer came second: it may hold the store
        _flush_and_exit(out)
    return 0


def _setting_refused(exc: Exception) -> str | None:
    """The variable a refused configuration names (ConfigError's message starts with it), else None."""
    if type(exc).__name__ != "ConfigError":  # its module is not imported here unless a value was refused
        return None
    message = str(exc)
    end = next(
        (i for i, ch in enumerate(message) if not (ch.isascii() and (ch.isupper() or ch.isdigit() or ch == "_"))), 0
    )
    # the name alone, followed by what is said of it ("X must …", "X=5 needs …", "X: …"); never a value
    return message[:end] if end >= 3 and message[0].isalpha() and message[end] in " =:" else None


#: How the process ends while a thread of its own may hold the store (a test replaces it).
EXIT: Callable[[int], None] = os._exit


def _flush_and_exit(out: Any, code: int = 0) -> None:
    for stream in (out, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    EXIT(code)

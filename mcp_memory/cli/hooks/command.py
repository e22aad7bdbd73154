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

from mcp_memory.server.hooks import folder
from mcp_memory.server.hooks.wire import CONFIDENCES, Ask
from mcp_memory.server.protocol.budget import BUDGET_MAX, BUDGET_MIN, DEFAULT_BUDGET, DEFAULT_LIMIT, LIMIT_MAX, query_of

TYPE_CHECKING = False  # not typing's: importing typing costs every hook process (docs/hooks.md#how-it-is-fast)
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from pathlib import Path
    from typing import Any

EVENTS = ("SessionStart", "UserPromptSubmit", "PreCompact", "Stop")
#: MEMORY_HOOK_TIMEOUT_MS: how long the hook waits for a listening server's answer, or for its own
#: process to open the store and answer when none listens.
DEFAULT_TIMEOUT_MS = 1000
TIMEOUT_MS_MIN, TIMEOUT_MS_MAX = 100, 10_000
FALLBACK_SECONDS = DEFAULT_TIMEOUT_MS / 1000
#: What SessionStart waits by default, and a prompt while the serving process is still starting
#: (its marker beside the socket: it listens before its store opens and its model loads). A session's
#: first hooks run while Claude Code starts serve-stdio; the plugin gives them 10 and 5 seconds.
STARTING_WAIT_MS = 4000
STARTING_SECONDS = STARTING_WAIT_MS / 1000
#: How often a hook answering itself looks whether a serving process has started listening.
LOOK_AGAIN_SECONDS = 0.1
#: How long a prompt with nothing listening looks for serve-stdio's marker before loading the model
#: itself (a serve-stdio started at the same moment writes it within a fraction of a second).
PROMPT_LOOKS_FIRST_SECONDS = 0.3
#: Capture asks once a session has sent this many prompts (or has been compacted).
CAPTURE_AFTER_PROMPTS = 3
#: The most of stdin a hook reads: a prompt is at most this long, and so is the rest of the payload.
STDIN_BYTES_MAX = 4 * 1024 * 1024

CAPTURE_REASON = (
    "Before you stop: if this session settled anything a later session should know (a decision and "
    "its reason, a convention, a command that worked, a correction the user made), store each as one "
    "self-contained fact with the memory server's remember tool. When a fact corrects a memory that was "
    "recalled or injected earlier, pass that memory's id in replaces. If there is nothing durable, say "
    "so in one line and stop. This is asked once per session."
)

USAGE = (
    "usage: mcp-memory hook {SessionStart,UserPromptSubmit,PreCompact,Stop} "
    "[--tenant T] [--conversation C] [--conversation-from-session]"
)


class Usage(Exception):
    pass


class Options:
    """The hook's arguments (plain classes here: dataclasses and Typer cost more than the hook)."""

    def __init__(
        self, event: str, tenant: str | None = None, conversation: str | None = None, from_session: bool = False
    ) -> None:
        self.event = event
        self.tenant = tenant
        self.conversation = conversation
        self.from_session = from_session


def parse(argv: Sequence[str]) -> Options:
    args = list(argv)
    if not args or args[0] not in EVENTS:
        raise Usage(f"EVENT must be one of {', '.join(EVENTS)}")
    options = Options(args.pop(0))
    while args:
        arg = args.pop(0)
        name, equals, inline = arg.partition("=")
        if name in ("--tenant", "-t", "--conversation", "-c"):
            if not equals and not args:
                raise Usage(f"{name} needs a value")
            value = inline if equals else args.pop(0)
            if name in ("--tenant", "-t"):
                options.tenant = value
            else:
                options.conversation = value
        elif arg == "--conversation-from-session":
            options.from_session = True
        else:
            raise Usage(f"unknown option {name}")
    return options


def log(event: str, hook: str | None, **context: Any) -> None:
    """One JSON line on stderr: the hook's event, and fixed words or counts, never a payload's text."""
    record = {"level": "warn", "event": event, "hook": hook, **context}
    try:
        sys.stderr.write(json.dumps(record, separators=(",", ":")) + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def read_payload(stream: Any, hook: str) -> dict[str, Any]:
    """The event's JSON object; {} for an empty, malformed or non-object stdin (logged)."""
    try:
        raw = stream.buffer.read(STDIN_BYTES_MAX) if hasattr(stream, "buffer") else stream.read().encode()
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


# --------------------------------------------------------------------------- settings


def _integer(environ: Mapping[str, str], name: str, default: int, low: int, high: int, hook: str) -> int:
    raw = environ.get(name)
    if raw is None or not raw.strip():
        return default
    try:
        value = int(raw.strip())
    except ValueError:
        value = low - 1
    if not low <= value <= high:
        log("hook_setting_ignored", hook, setting=name, expected=f"{low}-{high}", using=default)
        return default
    return value


class HookSettings:
    """MEMORY_HOOK_BUDGET, MEMORY_HOOK_LIMIT, MEMORY_HOOK_MIN_CONFIDENCE, MEMORY_HOOK_CAPTURE (docs/hooks.md)."""

    def __init__(
        self,
        budget: int = DEFAULT_BUDGET,
        limit: int = DEFAULT_LIMIT,
        min_confidence: str = "high",
        capture: bool = False,
        timeout_ms: int = DEFAULT_TIMEOUT_MS,
    ) -> None:
        self.budget = budget
        self.limit = limit
        self.min_confidence = min_confidence
        self.capture = capture
        self.timeout_ms = timeout_ms

    @property
    def starting_ms(self) -> int:
        """How long to wait for a serving process that is still starting."""
        return max(self.timeout_ms, STARTING_WAIT_MS)

    @classmethod
    def read(cls, environ: Mapping[str, str], hook: str) -> HookSettings:
        confidence = (environ.get("MEMORY_HOOK_MIN_CONFIDENCE") or "high").strip().lower()
        if confidence not in CONFIDENCES:
            log("hook_setting_ignored", hook, setting="MEMORY_HOOK_MIN_CONFIDENCE", expected="high|medium")
            confidence = "high"
        capture = (environ.get("MEMORY_HOOK_CAPTURE") or "").strip().lower()
        if capture not in ("", "0", "1", "true", "false", "yes", "no", "on", "off"):
            log("hook_setting_ignored", hook, setting="MEMORY_HOOK_CAPTURE", expected="0|1")
        return cls(
            budget=_integer(environ, "MEMORY_HOOK_BUDGET", DEFAULT_BUDGET, BUDGET_MIN, BUDGET_MAX, hook),
            limit=_integer(environ, "MEMORY_HOOK_LIMIT", DEFAULT_LIMIT, 1, LIMIT_MAX, hook),
            min_confidence=confidence,
            capture=capture in ("1", "true", "yes", "on"),
            timeout_ms=_integer(
                environ,
                "MEMORY_HOOK_TIMEOUT_MS",
                STARTING_WAIT_MS if hook == "SessionStart" else DEFAULT_TIMEOUT_MS,
                TIMEOUT_MS_MIN,
                TIMEOUT_MS_MAX,
                hook,
            ),
        )


def caller_of(options: Options, payload: Mapping[str, Any], environ: Mapping[str, str]) -> tuple[str, str | None]:
    """(tenant, conversation), as for serve-stdio; the payload gives only the session id, and only
    with --conversation-from-session. Raises ValueError naming what is wrong (core/identity.py)."""
    from mcp_memory.core.errors import ContextError
    from mcp_memory.core.identity import parse_conversation, parse_tenant

    tenant, tenant_name = options.tenant, "--tenant"
    if tenant is None or not tenant.strip():
        tenant, tenant_name = environ.get("MEMORY_TENANT"), "MEMORY_TENANT"
    if tenant is None or not tenant.strip():
        tenant = folder.DEFAULT_TENANT
    conversation, conversation_name = options.conversation, "--conversation"
    if conversation is None:
        conversation, conversation_name = environ.get("MEMORY_CONVERSATION"), "MEMORY_CONVERSATION"
    if options.from_session:
        session_id = payload.get("session_id")
        conversation = session_id if isinstance(session_id, str) else None
        conversation_name = "--conversation-from-session (the session id)"
    try:
        return parse_tenant(tenant, tenant_name), parse_conversation(conversation, conversation_name)
    except ContextError as exc:
        raise ValueError(str(exc)) from None


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
        # a prompt answered here loads the model: not while serve-stdio, loading it too, is on its way
        looking_first = time.monotonic() < started + PROMPT_LOOKS_FIRST_SECONDS
        if here is None and not (question.kind == "prompt" and (starting or looking_first)):
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


def _context(event: str, text: str | None) -> dict[str, Any] | None:
    if not text:
        return None
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}


def _session_id(payload: Mapping[str, Any]) -> str | None:
    session_id = payload.get("session_id")
    return session_id if isinstance(session_id, str) and session_id else None


def handle(options: Options, payload: dict[str, Any], environ: Mapping[str, str]) -> dict[str, Any] | None:
    """The JSON to print for this event, or None to print nothing."""
    from mcp_memory.cli.hooks import state as hook_state

    event = options.event
    settings = HookSettings.read(environ, event)
    session_id = _session_id(payload)
    state_file = None
    if event in ("Stop", "PreCompact"):
        if not settings.capture or session_id is None:
            return None
        tenant, _ = caller_of(options, payload, environ)
        with hook_state.session(folder.state_path(tenant, environ), session_id) as state:
            if event == "PreCompact":  # a long session: the next stop asks, whatever its prompt count
                state.compacted = True
                return None
            if payload.get("stop_hook_active") is True or state.asked:
                return None
            if state.prompts < CAPTURE_AFTER_PROMPTS and not state.compacted:
                return None
            state.asked = True
        return {"decision": "block", "reason": CAPTURE_REASON}

    tenant, conversation = caller_of(options, payload, environ)
    if session_id is not None:
        state_file = folder.state_path(tenant, environ)
    shown: frozenset[str] = frozenset()
    if event == "SessionStart":
        kind, prompt = "digest", ""
        source = payload.get("source")
        if state_file is not None and session_id is not None:
            with hook_state.session(state_file, session_id) as state:
                if source != "resume":  # a new, cleared or compacted context holds none of them
                    state.shown = []
                shown = frozenset(state.shown)
    else:
        sent = payload.get("prompt")
        if not isinstance(sent, str) or not sent.strip():
            return None
        kind, prompt = "prompt", query_of(sent)
        if state_file is not None and session_id is not None:
            with hook_state.session(state_file, session_id) as state:
                state.prompts += 1
                shown = frozenset(state.shown)
    question = Ask(
        kind,
        tenant,
        conversation,
        prompt,
        shown,
        settings.budget,
        settings.limit,
        settings.min_confidence,
    )
    text, ids = ask(question, event, environ, settings.timeout_ms / 1000, settings.starting_ms / 1000)
    if text and state_file is not None and session_id is not None:
        with hook_state.session(state_file, session_id) as state:
            state.show(ids)
    return _context(event, text)


def main(
    argv: Sequence[str], *, stdin: Any = None, stdout: Any = None, environ: Mapping[str, str] | None = None
) -> int:
    """Run one hook; always 0 (docs/hooks.md#failures)."""
    out = stdout or sys.stdout
    env = os.environ if environ is None else environ
    hook: str | None = argv[0] if argv else None
    try:
        options = parse(argv)
    except Usage as exc:
        log("hook_usage", hook if hook in EVENTS else None, message=str(exc), usage=USAGE)
        return 0
    payload = read_payload(stdin or sys.stdin, options.event)
    try:
        result = handle(options, payload, env)
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
        log("hook_failed", options.event, reason=type(exc).__name__)
        return 0
    if result is not None:
        out.write(json.dumps(result, separators=(",", ":")) + "\n")
        out.flush()
    if any(thread.is_alive() for thread in _THREADS):  # its own answer came second: it may hold the store
        _flush_and_exit(out)
    return 0


#: How the process ends while a thread of its own may hold the store (a test replaces it).
EXIT: Callable[[int], None] = os._exit


def _flush_and_exit(out: Any, code: int = 0) -> None:
    for stream in (out, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    EXIT(code)

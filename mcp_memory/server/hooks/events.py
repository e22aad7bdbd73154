"""What each Claude Code hook event asks and answers (docs/hooks.md): the same code whether the
hook command runs it (cli/hooks/command.py, asking the serving process on its socket) or the
serving process itself does.

The hook process imports this module, so it imports only the standard library and the hooks'
light modules (wire, folder, state, budget) and the settings' one reader of the environment
(config/__init__.py, without any section); the tenant's rules come from core/identity.py, imported
when a hook needs them.
"""

from __future__ import annotations

import json
import sys

from mcp_memory.config import Env
from mcp_memory.server.budget import (
    BUDGET_MAX,
    BUDGET_MIN,
    DEFAULT_BUDGET,
    DEFAULT_LIMIT,
    DEFAULT_TOOL_BUDGET,
    LIMIT_MAX,
    STOP_PREFIX,
    TOOL_BUDGET_MIN,
    TOOL_LIMIT,
    query_of,
)
from mcp_memory.server.hooks import folder
from mcp_memory.server.hooks.wire import (
    CALL_FIELDS,
    CALL_TEXT_MAX,
    CONFIDENCES,
    DEFAULT_CONFIDENCE,
    DEFAULT_STOP,
    DEFAULT_TOOL_CONFIDENCE,
    STOPS,
    TOOL_EVENTS,
    Ask,
)

TYPE_CHECKING = False  # not typing's: importing typing costs every hook process (docs/hooks.md#how-it-is-fast)
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from pathlib import Path
    from typing import Any

    from mcp_memory.server.hooks.state import Held

    Asker = Callable[[Ask, str, Mapping[str, str], float, float | None], tuple[str | None, list[str]]]
    Logger = Callable[..., None]

#: MEMORY_HOOK_TIMEOUT_MS: how long the hook waits for a listening server's answer, or for its own
#: process to open the store and answer when none listens.
DEFAULT_TIMEOUT_MS = 1000
TIMEOUT_MS_MIN, TIMEOUT_MS_MAX = 100, 10_000
#: What SessionStart waits by default, and a prompt while the serving process is still starting
#: (its marker beside the socket: it listens before its store opens and its model loads). A session's
#: first hooks run while Claude Code starts serve-stdio; the plugin gives them 10 and 5 seconds.
STARTING_WAIT_MS = 4000
STARTING_SECONDS = STARTING_WAIT_MS / 1000
#: Capture asks once a session has sent this many prompts (or has been compacted).
CAPTURE_AFTER_PROMPTS = 3
#: The tools a tool hook listens to unless MEMORY_HOOK_TOOLS names others (core/actions.py DEFAULT_TOOLS).
DEFAULT_TOOLS = ("Read", "Edit", "MultiEdit", "Write", "NotebookEdit", "Bash")

CAPTURE_REASON = (
    "Before you stop: if this session settled anything a later session should know (a decision and "
    "its reason, a convention, a command that worked, a correction the user made), store each as one "
    "self-contained fact with the memory server's remember tool. When a fact corrects a memory that was "
    "recalled or injected earlier, pass that memory's id in replaces. If there is nothing durable, say "
    "so in one line and stop. This is asked once per session."
)


class Options:
    """The hook's arguments, named as cli/app.py's `hook` names its parameters (a plain class:
    dataclasses and Typer cost more than the hook)."""

    def __init__(
        self,
        event: str,
        tenant: str | None = None,
        conversation: str | None = None,
        conversation_from_session: bool = False,
        client: str = "claude-code",
    ) -> None:
        self.event = event
        #: Whose payloads these are: "claude-code", or "codex" (cli/hooks/codex.py).
        self.client = client
        self.tenant = tenant
        self.conversation = conversation
        self.conversation_from_session = conversation_from_session


def log(event: str, hook: str | None, **context: Any) -> None:
    """One JSON line on stderr: the hook's event, and fixed words or counts, never a payload's text."""
    record = {"level": "warn", "event": event, "hook": hook, **context}
    try:
        sys.stderr.write(json.dumps(record, separators=(",", ":")) + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


# --------------------------------------------------------------------------- settings


def _refusal() -> type[Exception]:
    """ConfigError, for an `except`: Python looks at it only once something was raised, and Env's
    refusal has loaded it by then, so a hook whose settings are all fine never imports the errors."""
    from mcp_memory.core.errors import ConfigError

    return ConfigError


def _integer(env: Env, name: str, default: int, low: int, high: int, hook: str, say: Logger = log) -> int:
    """A number as every setting reads it (config/__init__.py); one out of bounds is logged and ignored."""
    try:
        return env.integer(name, default, high, minimum=low)
    except _refusal():
        say("hook_setting_ignored", hook, setting=name, expected=f"{low}-{high}", using=default)
        return default


def _confidence(env: Env, name: str, default: str, hook: str, say: Logger = log) -> str:
    """One of CONFIDENCES; another value is logged and ignored."""
    value = (env.raw(name) or default).strip().lower()
    if value not in CONFIDENCES:
        say("hook_setting_ignored", hook, setting=name, expected="|".join(CONFIDENCES))
        return default
    return value


class HookSettings:
    """MEMORY_HOOK_BUDGET, MEMORY_HOOK_LIMIT, MEMORY_HOOK_MIN_CONFIDENCE, MEMORY_HOOK_TOOL_MIN_CONFIDENCE, MEMORY_HOOK_CAPTURE,
    MEMORY_HOOK_TIMEOUT_MS, MEMORY_HOOK_TOOLS, MEMORY_HOOK_TOOL_BUDGET, MEMORY_HOOK_STOP (docs/hooks.md#budget)."""

    def __init__(
        self,
        budget: int = DEFAULT_BUDGET,
        limit: int = DEFAULT_LIMIT,
        min_confidence: str = DEFAULT_CONFIDENCE,
        capture: bool = False,
        timeout_ms: int = DEFAULT_TIMEOUT_MS,
        tools: tuple[str, ...] = DEFAULT_TOOLS,
        tool_budget: int = DEFAULT_TOOL_BUDGET,
        stop: str = DEFAULT_STOP,
        tool_min_confidence: str = DEFAULT_TOOL_CONFIDENCE,
    ) -> None:
        self.budget = budget
        self.limit = limit
        self.min_confidence = min_confidence
        self.capture = capture
        self.timeout_ms = timeout_ms
        self.tools = tools
        self.tool_budget = tool_budget
        #: Which memories stop a call at its PreToolUse (wire.STOPS; docs/hooks.md#stopped-before-it-runs).
        self.stop = stop
        #: When a tool call's recall answer is injected (the prompts' `min_confidence` for a call).
        self.tool_min_confidence = tool_min_confidence

    @property
    def starting_ms(self) -> int:
        """How long to wait for a serving process that is still starting."""
        return max(self.timeout_ms, STARTING_WAIT_MS)

    @classmethod
    def read(cls, environ: Mapping[str, str], hook: str, say: Logger = log) -> HookSettings:
        """The hook's variables, read through the settings' one reader (config/__init__.py); a value
        the settings would refuse is logged and its default used: a hook never stops a prompt."""
        env = Env(environ)
        confidence = _confidence(env, "MEMORY_HOOK_MIN_CONFIDENCE", DEFAULT_CONFIDENCE, hook, say)
        tool_confidence = _confidence(env, "MEMORY_HOOK_TOOL_MIN_CONFIDENCE", DEFAULT_TOOL_CONFIDENCE, hook, say)
        try:
            capture = env.flag("MEMORY_HOOK_CAPTURE")
        except _refusal():
            say("hook_setting_ignored", hook, setting="MEMORY_HOOK_CAPTURE", expected="0|1")
            capture = False
        stop = (env.raw("MEMORY_HOOK_STOP") or DEFAULT_STOP).strip().lower()
        if stop not in STOPS:
            say("hook_setting_ignored", hook, setting="MEMORY_HOOK_STOP", expected="|".join(STOPS), using=DEFAULT_STOP)
            stop = DEFAULT_STOP
        return cls(
            budget=_integer(env, "MEMORY_HOOK_BUDGET", DEFAULT_BUDGET, BUDGET_MIN, BUDGET_MAX, hook, say),
            limit=_integer(env, "MEMORY_HOOK_LIMIT", DEFAULT_LIMIT, 1, LIMIT_MAX, hook, say),
            min_confidence=confidence,
            tool_min_confidence=tool_confidence,
            capture=capture,
            timeout_ms=_integer(
                env,
                "MEMORY_HOOK_TIMEOUT_MS",
                STARTING_WAIT_MS if hook == "SessionStart" else DEFAULT_TIMEOUT_MS,
                TIMEOUT_MS_MIN,
                TIMEOUT_MS_MAX,
                hook,
                say,
            ),
            tools=_tools(env, hook, say),
            tool_budget=_integer(
                env, "MEMORY_HOOK_TOOL_BUDGET", DEFAULT_TOOL_BUDGET, TOOL_BUDGET_MIN, BUDGET_MAX, hook, say
            ),
            stop=stop,
        )


def _tools(env: Env, hook: str, say: Logger) -> tuple[str, ...]:
    """MEMORY_HOOK_TOOLS: the tools whose calls the tool hooks read, comma-separated; "none" for none."""
    raw = env.raw("MEMORY_HOOK_TOOLS")
    if raw is None:
        return DEFAULT_TOOLS
    if raw.lower() == "none":
        return ()
    named = tuple(dict.fromkeys(t.strip() for t in raw.split(",") if t.strip()))
    unknown = [t for t in named if t not in DEFAULT_TOOLS]
    if unknown or not named:
        say("hook_setting_ignored", hook, setting="MEMORY_HOOK_TOOLS", expected=",".join(DEFAULT_TOOLS) + "|none")
        return DEFAULT_TOOLS
    return named


def caller_of(options: Options, payload: Mapping[str, Any], environ: Mapping[str, str]) -> tuple[str, str | None]:
    """(tenant, conversation), as for serve-stdio; the payload gives only the session id, and only
    with --conversation-from-session. Raises ValueError naming what is wrong (core/identity.py)."""
    from mcp_memory.core.errors import ContextError
    from mcp_memory.core.identity import parse_conversation, parse_tenant

    env = Env(environ)
    tenant, tenant_name = options.tenant, "--tenant"
    if tenant is None or not tenant.strip():
        tenant, tenant_name = env.raw("MEMORY_TENANT"), "MEMORY_TENANT"
    if tenant is None or not tenant.strip():
        tenant = folder.DEFAULT_TENANT
    conversation, conversation_name = options.conversation, "--conversation"
    if conversation is None:
        conversation, conversation_name = env.raw("MEMORY_CONVERSATION"), "MEMORY_CONVERSATION"
    if options.conversation_from_session:
        session_id = payload.get("session_id")
        conversation = session_id if isinstance(session_id, str) else None
        conversation_name = "--conversation-from-session (the session id)"
    try:
        return parse_tenant(tenant, tenant_name), parse_conversation(conversation, conversation_name)
    except ContextError as exc:
        raise ValueError(str(exc)) from None


# --------------------------------------------------------------------------- the events


def tool_call(event: str, payload: Mapping[str, Any], tools: tuple[str, ...]) -> dict[str, Any] | None:
    """The part of a tool event's payload a question carries (docs/hooks.md#at-the-moment-of-action):
    the tool, the fields of its input that name what it touches, the folder, and a failure's
    error text, each cut to CALL_TEXT_MAX; None for a tool not listened to or a call with nothing to go on.
    A Write's content or an Edit's strings never leave the hook."""
    tool = payload.get("tool_name")
    if not isinstance(tool, str) or tool not in tools:
        return None
    given = payload.get("tool_input")
    if not isinstance(given, dict):
        return None
    kept = {k: v[:CALL_TEXT_MAX] for k, v in given.items() if k in CALL_FIELDS and isinstance(v, str) and v.strip()}
    if not kept:
        return None
    cwd = payload.get("cwd")
    error = payload.get("error") if event == "PostToolUseFailure" else None
    return {
        "event": event,
        "tool": tool,
        "input": kept,
        "cwd": cwd[:CALL_TEXT_MAX] if isinstance(cwd, str) else "",
        "error": error[:CALL_TEXT_MAX] if isinstance(error, str) else "",
    }


def _context(event: str, text: str | None) -> dict[str, Any] | None:
    if not text:
        return None
    if event == "PreToolUse" and text.startswith(STOP_PREFIX):
        # the reason reaches the model before the call runs; "ask" would show it to the person
        # only (docs/hooks.md#stopped-before-it-runs)
        return {
            "hookSpecificOutput": {
                "hookEventName": event,
                "permissionDecision": "deny",
                "permissionDecisionReason": text,
            }
        }
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}


def _session_id(payload: Mapping[str, Any]) -> str | None:
    session_id = payload.get("session_id")
    return session_id if isinstance(session_id, str) and session_id else None


def _state(path: Path, session_id: str) -> Held:
    """The session's state (server/hooks/state.py), loaded once a hook reads one: a Stop or
    PreCompact without capture, or a call of a tool not listened to, reads none."""
    from mcp_memory.server.hooks import state

    return state.session(path, session_id)


def handle(
    options: Options,
    payload: Mapping[str, Any],
    environ: Mapping[str, str],
    ask: Asker,
    say: Logger = log,
    caller: tuple[str, str | None] | None = None,
) -> dict[str, Any] | None:
    """The JSON to print for this event, or None to print nothing. `ask` answers a question;
    `caller` (tenant, conversation) is the serving process's own when it answers (server/hooks/tool.py),
    else they are read as for serve-stdio (caller_of)."""
    event = options.event
    settings = HookSettings.read(environ, event, say)
    session_id = _session_id(payload)
    state_file = None
    if event in ("Stop", "PreCompact"):
        if not settings.capture or session_id is None:
            return None
        tenant, _ = caller or caller_of(options, payload, environ)
        with _state(folder.state_path(tenant, environ), session_id) as state:
            if event == "PreCompact":  # a long session: the next stop asks, whatever its prompt count
                state.compacted = True
                return None
            if payload.get("stop_hook_active") is True or state.asked:
                return None
            if state.prompts < CAPTURE_AFTER_PROMPTS and not state.compacted:
                return None
            state.asked = True
        return {"decision": "block", "reason": CAPTURE_REASON}

    call = None
    if event in TOOL_EVENTS:
        call = tool_call(event, payload, settings.tools)
        if call is None:
            return None
    tenant, conversation = caller or caller_of(options, payload, environ)
    if session_id is not None:
        state_file = folder.state_path(tenant, environ)
    shown: frozenset[str] = frozenset()
    budget, limit = settings.budget, settings.limit
    if event == "SessionStart":
        kind, prompt = "digest", ""
        source = payload.get("source")
        if state_file is not None and session_id is not None:
            with _state(state_file, session_id) as state:
                if source != "resume":  # a new, cleared or compacted context holds none of them
                    state.shown = []
                shown = frozenset(state.shown)
    elif call is not None:
        kind, prompt = "tool", ""
        budget, limit = settings.tool_budget, min(settings.limit, TOOL_LIMIT)
        if state_file is not None and session_id is not None:
            with _state(state_file, session_id) as state:
                shown = frozenset(state.shown)
    else:
        sent = payload.get("prompt")
        if not isinstance(sent, str) or not sent.strip():
            return None
        kind, prompt = "prompt", query_of(sent)
        if state_file is not None and session_id is not None:
            with _state(state_file, session_id) as state:
                state.prompts += 1
                shown = frozenset(state.shown)
    # a stop only before a call runs, and only where its decision is known to reach the model (Claude Code)
    stop = settings.stop if event == "PreToolUse" and options.client == "claude-code" else "off"
    confidence = settings.tool_min_confidence if kind == "tool" else settings.min_confidence
    question = Ask(kind, tenant, conversation, prompt, shown, budget, limit, confidence, call, stop)
    text, ids = ask(question, event, environ, settings.timeout_ms / 1000, settings.starting_ms / 1000)
    if text and state_file is not None and session_id is not None:
        with _state(state_file, session_id) as state:
            state.show(ids)
    return _context(event, text)

"""A hook's question on the wire: one JSON line to the serving process's socket (docs/hooks.md#how-it-is-fast).

The hook process imports this module before anything else, so it imports only the standard
library and server/budget.py.
"""

from __future__ import annotations

import json
from collections.abc import Mapping  # parse_ask's isinstance; collections is loaded with pathlib anyway

from mcp_memory.server.budget import (
    BUDGET_MAX,
    BUDGET_MIN,
    DEFAULT_BUDGET,
    DEFAULT_LIMIT,
    LIMIT_MAX,
    QUERY_CHARS,
    TOOL_BUDGET_MIN,
)

TYPE_CHECKING = False  # not typing's: importing typing costs every hook process (docs/hooks.md#how-it-is-fast)
if TYPE_CHECKING:
    from typing import Any

#: Memory ids a question may ask to leave out (those already in this session's context).
EXCLUDE_MAX = 2000
#: The longest question line the serving process reads.
REQUEST_BYTES_MAX = 64 * 1024

KINDS = ("digest", "prompt", "tool")
#: The tool events a question may come from: before a call, and after a call that failed.
TOOL_EVENTS = ("PreToolUse", "PostToolUseFailure")
#: The fields of a tool's input a question carries (what it touches), and the longest text of each.
CALL_FIELDS = ("file_path", "notebook_path", "command")
CALL_TEXT_MAX = 2000
#: MEMORY_HOOK_MIN_CONFIDENCE's values (RecallResult.worth_injecting): `likely` (the default: the
#: answer's probability reaches the threshold chosen on the prompt dev set), or a band and above.
CONFIDENCES = ("likely", "medium", "high")
DEFAULT_CONFIDENCE = "likely"
#: MEMORY_HOOK_TOOL_MIN_CONFIDENCE's default: a tool call's recall answer is injected from HIGH only,
#: since the hooks' threshold was chosen on prompts, and a path or a command is no question
#: (bench/RESULTS.md, "Tool calls are not questions").
DEFAULT_TOOL_CONFIDENCE = "high"
#: MEMORY_HOOK_STOP's values (docs/hooks.md#stopped-before-it-runs): which memories stop a call at
#: its PreToolUse, before it runs: those tagged rule or that warn (the default), rules only, none.
STOPS = ("warnings", "rules", "off")
DEFAULT_STOP = "warnings"


class Ask:
    """One question of a hook: the digest, or the memories that answer a prompt.

    A plain class, not a dataclass: importing dataclasses costs the hook more than its socket round trip."""

    __slots__ = (
        "budget",
        "call",
        "conversation",
        "exclude",
        "kind",
        "limit",
        "min_confidence",
        "prompt",
        "stop",
        "tenant",
    )

    def __init__(
        self,
        kind: str,
        tenant: str,
        conversation: str | None = None,
        prompt: str = "",
        exclude: frozenset[str] = frozenset(),
        budget: int = DEFAULT_BUDGET,
        limit: int = DEFAULT_LIMIT,
        min_confidence: str = DEFAULT_CONFIDENCE,
        call: dict[str, Any] | None = None,
        stop: str = "off",
    ) -> None:
        self.kind = kind
        self.tenant = tenant
        self.conversation = conversation
        self.prompt = prompt
        self.exclude = exclude
        self.budget = budget
        self.limit = limit
        self.min_confidence = min_confidence
        #: A tool question's call (events.tool_call): its event, tool, input fields, folder and error.
        self.call = call
        #: Which memories may stop a tool call before it runs (STOPS); "off" for every other question.
        self.stop = stop

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Ask) and all(getattr(self, n) == getattr(other, n) for n in self.__slots__)

    def __hash__(self) -> int:
        return hash(
            tuple(
                json.dumps(v, sort_keys=True) if n == "call" else v for n in self.__slots__ for v in [getattr(self, n)]
            )
        )

    def to_line(self) -> bytes:
        body = {
            "v": 1,
            "kind": self.kind,
            "tenant": self.tenant,
            "conversation": self.conversation,
            "prompt": self.prompt,
            "exclude": sorted(self.exclude),
            "budget": self.budget,
            "limit": self.limit,
            "min_confidence": self.min_confidence,
        }
        if self.call is not None:
            body["call"] = self.call
        if self.stop != "off":  # a server before stops ignores it: the call then gets context, as before
            body["stop"] = self.stop
        # ASCII escapes: a prompt may hold a lone surrogate, which has no UTF-8 form
        return json.dumps(body, separators=(",", ":")).encode("ascii") + b"\n"


def parse_ask(data: Any) -> Ask:
    """An Ask from its wire form, or ValueError naming the field that is wrong."""
    if not isinstance(data, Mapping) or data.get("v") != 1:
        raise ValueError("not a version 1 question")
    kind = data.get("kind")
    if kind not in KINDS:
        raise ValueError("kind")
    tenant = data.get("tenant")
    if not isinstance(tenant, str) or not tenant:
        raise ValueError("tenant")
    conversation = data.get("conversation")
    if conversation is not None and not isinstance(conversation, str):
        raise ValueError("conversation")
    prompt = data.get("prompt", "")
    if not isinstance(prompt, str) or len(prompt) > QUERY_CHARS:
        raise ValueError("prompt")
    exclude = data.get("exclude", [])
    if not isinstance(exclude, list) or len(exclude) > EXCLUDE_MAX or not all(isinstance(i, str) for i in exclude):
        raise ValueError("exclude")
    budget = data.get("budget", DEFAULT_BUDGET)
    lowest = TOOL_BUDGET_MIN if kind == "tool" else BUDGET_MIN  # MEMORY_HOOK_TOOL_BUDGET goes lower
    if not isinstance(budget, int) or not lowest <= budget <= BUDGET_MAX:
        raise ValueError("budget")
    limit = data.get("limit", DEFAULT_LIMIT)
    if not isinstance(limit, int) or not 1 <= limit <= LIMIT_MAX:
        raise ValueError("limit")
    min_confidence = data.get("min_confidence", DEFAULT_CONFIDENCE)
    if min_confidence not in CONFIDENCES:
        raise ValueError("min_confidence")
    call = _call(data.get("call")) if kind == "tool" else None
    stop = data.get("stop", "off")
    if stop not in STOPS or stop != "off" and kind != "tool":
        raise ValueError("stop")
    return Ask(
        kind, tenant, conversation or None, prompt, frozenset(exclude), budget, limit, min_confidence, call, stop
    )


def _call(data: Any) -> dict[str, Any]:
    """A tool question's call, checked field by field (ValueError names "call")."""
    if not isinstance(data, Mapping) or data.get("event") not in TOOL_EVENTS:
        raise ValueError("call")
    given = data.get("input")
    texts = [data.get("tool"), data.get("cwd", ""), data.get("error", "")]
    if not isinstance(given, Mapping) or not given or not set(given) <= set(CALL_FIELDS):
        raise ValueError("call")
    texts += list(given.values())
    if not all(isinstance(t, str) and len(t) <= CALL_TEXT_MAX for t in texts) or not data.get("tool"):
        raise ValueError("call")
    return {
        "event": data["event"],
        "tool": data["tool"],
        "input": dict(given),
        "cwd": data.get("cwd", ""),
        "error": data.get("error", ""),
    }

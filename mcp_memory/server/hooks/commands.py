"""The CLI's five memory commands answered by the serving process on its hook socket
(docs/cli.md#a-running-server-answers): `recall`, `remember`, `list`, `stats` and `forget` run
a second or more to load the model and open the store; a serve-stdio of the same store and
tenant has both already.

A question is one JSON line: {"v": 1, "kind": "command", "tenant", "conversation",
"settings", "op", "args"}. `op` is one of the service's calls in OPS and `args` its keyword
arguments as results.py encodes them. The tenant must be the serving process's own (as for a
hook: listener.py), and `settings` the key of the settings the service answers with
(config/service_key.py): a CLI run with another floor, model or store opens its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcp_memory.core.errors import MemoryServerError
from mcp_memory.core.identity import parse_conversation
from mcp_memory.core.model import Caller
from mcp_memory.core.service import MemoryService
from mcp_memory.server.hooks.results import decode, encode, encode_error

#: The service's calls a command may make, and the keyword arguments each takes.
OPS: dict[str, frozenset[str]] = {
    "recall_request": frozenset({"request"}),
    "remember_request": frozenset({"request"}),
    "list": frozenset({"limit", "cursor", "memory_type", "tags", "scope", "since", "until"}),
    "stats": frozenset(),
    "forget": frozenset({"memory_id"}),
}
#: The request each `*_request` call takes (core/requests.py).
_REQUESTS = {"recall_request": "RecallRequest", "remember_request": "RememberRequest"}
#: The calls that write: the CLI never runs one again in its own process once the server has it.
WRITES = frozenset({"remember_request", "forget"})


class Command:
    """One command's question, checked."""

    __slots__ = ("args", "conversation", "op", "settings", "tenant")

    def __init__(self, data: Mapping[str, Any]) -> None:
        """ValueError naming the field that is wrong."""
        self.tenant = data.get("tenant")
        if not isinstance(self.tenant, str) or not self.tenant:
            raise ValueError("tenant")
        self.conversation = data.get("conversation")
        if self.conversation is not None and not isinstance(self.conversation, str):
            raise ValueError("conversation")
        self.settings = data.get("settings")
        if not isinstance(self.settings, str):
            raise ValueError("settings")
        self.op = data.get("op")
        if self.op not in OPS:
            raise ValueError("op")
        args = decode(data.get("args"))
        if not isinstance(args, dict) or not set(args) <= OPS[str(self.op)]:
            raise ValueError("args")
        wanted = _REQUESTS.get(str(self.op))
        if wanted is not None and type(args.get("request")).__name__ != wanted:  # a request of its own kind
            raise ValueError("args")
        self.args: dict[str, Any] = args


async def run(service: MemoryService, tenant: str, command: Command) -> dict[str, Any]:
    """The reply line's object: the result, or the service's refusal or failure as the CLI
    reports it in its own process (results.py encode_error)."""
    caller = Caller(tenant, parse_conversation(command.conversation, "conversation"))
    try:
        result = await getattr(service, str(command.op))(caller, **command.args)
    except MemoryServerError as exc:
        return {"ok": True, "error": encode_error(exc)}
    return {"ok": True, "result": encode(result)}

"""The CLI's memory commands asked of a running serve-stdio (docs/cli.md#a-running-server-answers).

`recall`, `remember`, `list`, `stats` and `forget` spend a second or more opening the store and
loading the model; a serve-stdio of the same store, tenant and settings has both, and answers
on the socket it answers the hooks on (server/hooks/listener.py, commands.py). `Served` stands
in for the service in the command's body: each call goes over the socket, and its result comes
back as the same objects (server/hooks/results.py), so the command prints what it would have
printed from its own store. NotServed, whenever the server did not take the call (nothing
listens, another tenant or other settings, refused, gone): the command opens the store itself.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from mcp_memory.core.errors import MemoryServerError
from mcp_memory.server.hooks import folder
from mcp_memory.server.hooks.results import Undecodable, decode, decode_error, encode
from mcp_memory.server.hooks.wire import REQUEST_BYTES_MAX

#: How long a command waits to connect, and then for its answer (the server may still be loading
#: the model or opening the store: listener.py OPEN_SECONDS).
CONNECT_SECONDS = 1.0
ANSWER_SECONDS = 120.0
#: The calls that write: once sent, never made again in this process (commands.py WRITES).
WRITES = frozenset({"remember_request", "forget"})

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

    from mcp_memory.core.model import Caller


class NotServed(Exception):
    """The serving process did not take the call: the command opens the store itself."""


class Lost(MemoryServerError):
    """A write was sent and no answer came: whether it was made is not known."""


class Served:
    """The service's calls the five commands make, answered by the serving process."""

    def __init__(self, path: Path, key: str) -> None:
        self.path = path
        self.key = key

    async def recall_request(self, caller: Caller, request: Any) -> Any:
        return await self._call("recall_request", caller, {"request": request})

    async def remember_request(self, caller: Caller, request: Any) -> Any:
        return await self._call("remember_request", caller, {"request": request})

    async def list(self, caller: Caller, **kwargs: Any) -> Any:
        return await self._call("list", caller, kwargs)

    async def stats(self, caller: Caller) -> Any:
        return await self._call("stats", caller, {})

    async def forget(self, caller: Caller, memory_id: str) -> Any:
        return await self._call("forget", caller, {"memory_id": memory_id})

    async def _call(self, op: str, caller: Caller, args: dict[str, Any]) -> Any:
        question = {
            "v": 1,
            "kind": "command",
            "tenant": caller.tenant,
            "conversation": caller.conversation,
            "settings": self.key,
            "op": op,
            "args": encode(args),
        }
        try:  # a lone surrogate has no UTF-8 form: the store path refuses or takes it as it does
            line = json.dumps(question, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"
        except UnicodeEncodeError:
            raise NotServed from None
        if len(line) > REQUEST_BYTES_MAX:
            raise NotServed
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_unix_connection(str(self.path)), CONNECT_SECONDS)
        except (OSError, TimeoutError):
            raise NotServed from None
        sent = False
        try:
            writer.write(line)
            await writer.drain()
            sent = True
            raw = await asyncio.wait_for(reader.read(), ANSWER_SECONDS)  # one line, then the server closes
        except (OSError, TimeoutError):
            if sent and op in WRITES:
                raise Lost(_LOST) from None
            raise NotServed from None
        finally:
            writer.close()
        return self._answer(op, raw)

    def _answer(self, op: str, raw: bytes) -> Any:
        try:
            reply = json.loads(raw)
            if not isinstance(reply, dict):
                raise Undecodable("not an object")
            if reply.get("ok") is not True:
                if op in WRITES and "refused" not in reply:  # it failed while running the call
                    raise Lost(_LOST)
                raise NotServed
            if "error" in reply:
                error = decode_error(reply["error"])
            else:
                return decode(reply["result"])
        except (ValueError, KeyError, TypeError):
            if op in WRITES:
                raise Lost(_LOST) from None
            raise NotServed from None
        raise error


_LOST = (
    "the running serve-stdio took the command but gave no answer, so whether it was done is not "
    "known: look with `mcp-memory list` before running it again"
)


def served(settings: Any, caller: Caller) -> Served | None:
    """The serving process of this store and tenant, when one listens (by its socket's presence
    in this user's own folder); None otherwise."""
    if not hasattr(asyncio, "open_unix_connection"):  # Windows: no Unix sockets
        return None
    from mcp_memory.config.service_key import service_key

    path = folder.socket_path(caller.tenant)
    try:
        if not folder.own_folder(path.parent) or not path.exists():
            return None
    except OSError:  # not this user's own folder: whatever listens there is not this user's server
        return None
    return Served(path, service_key(settings))

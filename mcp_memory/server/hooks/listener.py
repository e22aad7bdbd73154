"""serve-stdio answers Claude Code's hooks on a private Unix socket (docs/hooks.md#how-it-is-fast).

The process Claude Code already runs for the tools has the model loaded and the store open,
so a hook asks it instead of loading them itself: one JSON line in, one JSON line out. The
socket lives in the data directory under a name of the store and tenant (folder.py
socket_path), with mode 0600 in a 0700 folder. Several sessions of one project run several
serve-stdio processes: the first one listens, the others look again every TAKEOVER_SECONDS
and take over when it has gone. A question for another tenant is refused.

serve-stdio listens before it opens the store (a session's first hooks run while it starts):
a question that comes before `serve(service)` waits for it, and until `warmed()` (the model
loaded) a marker beside the socket (folder.py starting_path) tells a hook to wait longer.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from mcp_memory.core.errors import ContextError
from mcp_memory.core.identity import parse_conversation
from mcp_memory.core.logs import JsonLog
from mcp_memory.core.model import Caller
from mcp_memory.core.service import MemoryService
from mcp_memory.server.bounded_json import loads_bytes
from mcp_memory.server.hooks import folder
from mcp_memory.server.hooks.answers import answer
from mcp_memory.server.hooks.folder import private_folder, socket_path, starting_path
from mcp_memory.server.hooks.wire import REQUEST_BYTES_MAX, parse_ask

if TYPE_CHECKING:
    from mcp_memory.server.hooks import commands

#: How often a process that found the socket taken looks whether its holder has gone.
TAKEOVER_SECONDS = 30.0
#: How long the server waits for a connected hook's question line.
READ_SECONDS = 2.0
#: How long a question that came before the store was open waits for it (the hook gives up sooner).
OPEN_SECONDS = 30.0


class HookSocket:
    """The listening socket of one serving process, or the wait to become it."""

    def __init__(
        self,
        service: MemoryService | None,
        caller: Caller,
        log: JsonLog,
        path: Path | None = None,
        on_question: Callable[[], None] | None = None,
        settings_key: Callable[[], str] | None = None,
    ) -> None:
        self.service = service
        #: The key of the settings the service answers with (config/service_key.py), worked out at
        #: the first command: the CLI's commands are answered here only when theirs is the same
        #: (commands.py); None: never.
        self.settings_key = settings_key
        #: Called at each question (serve-stdio starts its warm-up there, as at the handshake).
        self.on_question = on_question or (lambda: None)
        self.caller = caller
        self.log = log
        self.path = path or socket_path(caller.tenant)
        self._server: asyncio.AbstractServer | None = None
        self._inode: int | None = None
        self._waiting: asyncio.Task[None] | None = None
        self._opened = asyncio.Event()
        if service is not None:
            self._opened.set()
        self._warm = False
        self._settings_key: str | None = None

    def serve(self, service: MemoryService) -> None:
        """The store is open: answer the questions waiting for it, and every one after."""
        self.service = service
        self._opened.set()

    def warmed(self) -> None:
        """The model is loaded (or its load was tried): hooks need not wait longer for this process."""
        self._warm = True
        folder.unmark_starting(starting_path(self.path))

    def _mark_starting(self) -> None:
        folder.mark_starting(self.path, take_over=True)  # another's (it will find this one listening) becomes ours

    def _drop_early_marker(self) -> None:
        """The marker serve-stdio wrote before its app loaded, unless it is this socket's own."""
        early, folder.EARLY_MARKER = folder.EARLY_MARKER, None
        if early is not None and (early != starting_path(self.path) or not self.listening):
            folder.unmark_starting(early)

    @property
    def warm(self) -> bool:
        """The model is loaded (or its load was tried)."""
        return self._warm

    @property
    def listening(self) -> bool:
        return self._server is not None

    async def start(self) -> None:
        """Listen now if the socket is free (or stale); otherwise wait in the background for it."""
        if not hasattr(socket, "AF_UNIX"):  # Windows without Unix sockets: hooks answer in their own process
            self._drop_early_marker()
            return
        try:
            if not await self._try_listen():
                self._waiting = asyncio.get_running_loop().create_task(self._wait_for_turn())
        except OSError as exc:  # hooks then answer in their own process: slower, never broken
            self.log.error("hook_socket_failed", exc)
        finally:
            self._drop_early_marker()

    async def _wait_for_turn(self) -> None:
        while self._server is None:
            await asyncio.sleep(TAKEOVER_SECONDS)
            with contextlib.suppress(OSError):
                await self._try_listen()

    async def _try_listen(self) -> bool:
        private_folder(self.path.parent)  # 0700, or NotOurs: not this user's own directory
        if self.path.exists() or self.path.is_symlink():
            if await _answers(self.path):
                return False
            self.path.unlink(missing_ok=True)  # stale: its process is gone
        if not self._warm:  # before the socket exists: a hook that finds the socket finds the marker
            self._mark_starting()
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            previous = os.umask(0o177)  # the socket is created 0600, never briefly wider
            try:
                sock.bind(str(self.path))
            finally:
                os.umask(previous)
            os.chmod(self.path, 0o600)
            sock.listen(16)
            sock.setblocking(False)
            self._inode = os.stat(self.path).st_ino
            self._server = await asyncio.start_unix_server(self._handle, sock=sock, limit=REQUEST_BYTES_MAX)
        except BaseException:
            sock.close()
            folder.unmark_starting(starting_path(self.path))
            raise
        return True

    async def close(self) -> None:
        """Stop listening and remove the socket, if it is still this process's."""
        if self._waiting is not None:
            self._waiting.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._waiting
        self._opened.set()  # a question still waiting for the store is refused now
        if self._server is None:
            return
        if not self._warm:
            folder.unmark_starting(starting_path(self.path))
        self._server.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._server.wait_closed(), 1.0)
        self._server = None
        with contextlib.suppress(OSError):
            if os.stat(self.path).st_ino == self._inode:
                self.path.unlink()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        started = time.perf_counter()
        reply: dict[str, object] = {"ok": False}
        kind = None
        try:
            line = await asyncio.wait_for(reader.readline(), READ_SECONDS)
            if not line:  # a probe (another process looking whether this one listens)
                writer.close()
                return
            self.on_question()
            data = loads_bytes(line)  # depth-limited: a JsonRefused is a ValueError
            if isinstance(data, dict) and data.get("v") == 1 and data.get("kind") == "command":
                from mcp_memory.server.hooks import commands  # at the first command: the handshake loads no more

                kind = "command"
                reply = await self._command(commands.Command(data))
            else:
                ask = parse_ask(data)
                kind = ask.kind
                if ask.tenant != self.caller.tenant:
                    reply = {"ok": False, "refused": "tenant"}
                elif self.service is None and not await self._service_opened():
                    reply = {"ok": False, "refused": "starting"}
                else:
                    assert self.service is not None
                    caller = Caller(self.caller.tenant, parse_conversation(ask.conversation, "conversation"))
                    text, ids = await answer(self.service, caller, ask)
                    reply = {"ok": True, "text": text, "ids": ids}
        except (TimeoutError, ValueError, ContextError, asyncio.LimitOverrunError) as exc:
            reply = {"ok": False, "refused": "question"}
            self.log.warn("hook_question_refused", type(exc).__name__, tenant=self.caller.tenant)
        except Exception as exc:
            self.log.error("hook_answer_failed", exc, tenant=self.caller.tenant)
        try:
            writer.write(json.dumps(reply, separators=(",", ":")).encode("ascii") + b"\n")
            await writer.drain()
        except OSError:
            pass  # the hook gave up waiting; nothing to tell it
        finally:
            writer.close()
        self.log.info(
            "hook_call",
            tenant=self.caller.tenant,
            method=kind,
            ms=round((time.perf_counter() - started) * 1000),
            ok=bool(reply.get("ok")),
        )

    async def _command(self, command: commands.Command) -> dict[str, object]:
        """A CLI command's reply (commands.py): refused for another tenant or other settings."""
        from mcp_memory.server.hooks import commands

        if command.tenant != self.caller.tenant:
            return {"ok": False, "refused": "tenant"}
        if self.settings_key is None or command.settings != self._key():
            return {"ok": False, "refused": "settings"}
        if self.service is None and not await self._service_opened():
            return {"ok": False, "refused": "starting"}
        assert self.service is not None
        return await commands.run(self.service, self.caller.tenant, command)

    def _key(self) -> str:
        if self._settings_key is None:
            assert self.settings_key is not None
            self._settings_key = self.settings_key()
        return self._settings_key

    async def _service_opened(self) -> bool:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._opened.wait(), OPEN_SECONDS)
        return self.service is not None


async def _answers(path: Path) -> bool:
    """True when a process listens at `path` (a connection is accepted)."""
    try:
        _, writer = await asyncio.wait_for(asyncio.open_unix_connection(str(path)), 0.5)
    except (TimeoutError, OSError):
        return False
    writer.close()
    return True

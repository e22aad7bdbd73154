"""serve-stdio's transport: one JSON-RPC message per line, and every line answered.

The MCP SDK's stdio reader hands a line it cannot validate to a dispatcher that drops
it without a word, so the client waits for its own timeout; and it decodes stdin with
`errors="replace"`, storing invalid UTF-8 as U+FFFD where HTTP refuses the body. This
transport screens each line first (docs/tools.md, "Over stdio"):

- longer than `MAX_LINE_BYTES` (the HTTP body limit) → `-32600`; the rest of the line
  is discarded as it arrives, never held;
- not UTF-8 → `-32700`, as over HTTP;
- not JSON, bytes after the JSON, NaN → `-32700`; nested deeper than
  `json_limits.MAX_DEPTH` → `-32600`;
- a batch (a JSON array) or anything that is not a JSON-RPC message → `-32600`;
- a request whose `id` is not a string or an integer (null, true, 1.5, an object),
  which the SDK would take for a notification and never answer → `-32600`, id `null`;
- a lone surrogate (`"\\ud800"`) in a tool argument's text reaches the tool, which
  refuses it naming the argument (as the README says); anywhere else (a method, an
  id, a key) it is `-32700`.

A refusal carries the request's `id` when one can be read from the line (so the
client's pending call ends), else `null`, and writes one `stdio_line_refused` log line
that says why and never quotes the line. Blank lines are skipped.

stdin and stdout are claimed as the SDK's transport claims them: the protocol reads and
writes private duplicates, while descriptor 0 reads the null device and descriptor 1
writes to stderr, so a stray print or a child process cannot corrupt the wire.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import AsyncIterator, Callable
from typing import Any

from mcp_memory.core.logs import JsonLog
from mcp_memory.server.bounded_json import (
    _TOKENS,
    INVALID_REQUEST,
    ODD_ID_REASON,
    PARSE_ERROR,
    JsonRefused,
    loads,
    request_without_an_answerable_id,
)

#: The longest line read (what serve-http takes as a body).
MAX_LINE_BYTES = 1024 * 1024
_CHUNK = 64 * 1024
_SURROGATE = re.compile("[\ud800-\udfff]")


class Refused:
    """A line that is answered with a JSON-RPC error instead of being served."""

    __slots__ = ("code", "reason", "request_id")

    def __init__(self, code: int, reason: str, request_id: int | str | None) -> None:
        self.code, self.reason, self.request_id = code, reason, request_id

    def answer(self) -> Any:
        import mcp_types as types

        label = "Parse error" if self.code == PARSE_ERROR else "Invalid request"
        error = types.ErrorData(code=self.code, message=f"{label}: {self.reason}")
        return types.JSONRPCError(jsonrpc="2.0", id=self.request_id, error=error)


def screen(line: bytes) -> Any:
    """The SessionMessage a line holds, or `Refused` saying why it holds none."""
    import mcp_types as types
    from mcp.shared.message import SessionMessage
    from pydantic import ValidationError

    if len(line) > MAX_LINE_BYTES:
        return Refused(
            INVALID_REQUEST,
            f"the line is longer than {MAX_LINE_BYTES} bytes",
            request_id(line[:4096].decode("utf-8", "replace")),
        )
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Refused(PARSE_ERROR, f"not valid UTF-8 (byte {exc.start})", request_id(line.decode("utf-8", "replace")))
    try:
        parsed = loads(text)
    except JsonRefused as exc:
        return Refused(exc.code, str(exc), request_id(text))
    if isinstance(parsed, list):
        return Refused(INVALID_REQUEST, "batches are not supported: send one JSON-RPC message per line", None)
    found = _id_of(parsed)
    if _stray_surrogate(parsed):
        return Refused(PARSE_ERROR, "an unpaired surrogate outside a tool argument's text is not valid Unicode", found)
    if request_without_an_answerable_id(parsed):
        # null, true, 1.5, an object: the SDK reads the line as a notification and drops it
        return Refused(INVALID_REQUEST, ODD_ID_REASON, None)
    try:
        message = types.jsonrpc_message_adapter.validate_python(parsed, by_name=False)
    except ValidationError:
        return Refused(INVALID_REQUEST, "not a JSON-RPC 2.0 request, notification or response", found)
    return SessionMessage(message)


def _id_of(parsed: Any) -> int | str | None:
    value = parsed.get("id") if isinstance(parsed, dict) else None
    if isinstance(value, bool) or not isinstance(value, int | str):
        return None
    if isinstance(value, str) and _SURROGATE.search(value):
        return None
    return value


def request_id(text: str) -> int | str | None:
    """The top-level `id` of a JSON object in `text` that may not parse as a whole (cut
    short, too deep, trailing bytes): its members are read in order, nested values skipped
    without being parsed. None when there is none to read."""
    decoder = json.JSONDecoder()
    ws = re.compile(r"\s*")
    try:
        i = ws.match(text, 0).end()  # type: ignore[union-attr]
        if text[i] != "{":
            return None
        i += 1
        while True:
            i = ws.match(text, i).end()  # type: ignore[union-attr]
            if text[i] != '"':
                return None
            key, i = decoder.raw_decode(text, i)
            i = ws.match(text, i).end()  # type: ignore[union-attr]
            if text[i] != ":":
                return None
            i = ws.match(text, i + 1).end()  # type: ignore[union-attr]
            if text[i] in "[{":
                i = _skip_nested(text, i)
                if i < 0:
                    return None
            else:
                value, i = decoder.raw_decode(text, i)
                if key == "id":
                    return _id_of({"id": value})
            i = ws.match(text, i).end()  # type: ignore[union-attr]
            if text[i] != ",":
                return None
            i += 1
    except (ValueError, IndexError, RecursionError):
        return None


def _skip_nested(text: str, start: int) -> int:
    """Where the array or object at `start` ends (-1: it does not)."""
    depth = 0
    for match in _TOKENS.finditer(text, start):
        ch = text[match.start()]
        if ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
            if depth == 0:
                return match.end()
    return -1


def _stray_surrogate(message: dict[str, Any]) -> bool:
    """A lone surrogate anywhere but in a tools/call argument's text (a string, or a list of them)."""
    params = message.get("params")
    arguments = params.get("arguments") if isinstance(params, dict) else None
    if message.get("method") == "tools/call" and isinstance(arguments, dict):
        for key, value in arguments.items():
            if _SURROGATE.search(key):
                return True
            items = value if isinstance(value, list) else [value]
            if any(not isinstance(item, str) and _holds_surrogate(item) for item in items):
                return True
        rest = {k: v for k, v in params.items() if k != "arguments"} if isinstance(params, dict) else {}
        return _holds_surrogate({k: v for k, v in message.items() if k != "params"}) or _holds_surrogate(rest)
    return _holds_surrogate(message)


def _holds_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        return _SURROGATE.search(value) is not None
    if isinstance(value, dict):
        return any(_holds_surrogate(k) or _holds_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_holds_surrogate(v) for v in value)
    return False


def serialize(message: Any) -> bytes:
    """One line of JSON for an outgoing message. Text that cannot be UTF-8 (a lone
    surrogate quoted back) becomes `?` rather than stopping the writer."""
    try:
        return message.model_dump_json(by_alias=True, exclude_unset=True).encode("utf-8") + b"\n"
    except Exception:
        dumped = message.model_dump(mode="python", by_alias=True, exclude_unset=True)
        text = json.dumps(dumped, ensure_ascii=False, separators=(",", ":"), default=str)
        return text.encode("utf-8", "replace") + b"\n"


class _Lines:
    """Splits what is read into lines, holding at most MAX_LINE_BYTES (+1) of any one line."""

    def __init__(self) -> None:
        self._pending = bytearray()
        self._overflow = False

    def feed(self, data: bytes) -> list[bytes]:
        lines: list[bytes] = []
        while data:
            cut = data.find(b"\n")
            piece, data = (data, b"") if cut < 0 else (data[:cut], data[cut + 1 :])
            room = MAX_LINE_BYTES + 1 - len(self._pending)
            if len(piece) > room:
                self._pending += piece[: max(room, 0)]
                self._overflow = True
            elif not self._overflow:
                self._pending += piece
            if cut >= 0:
                lines.append(self._take())
        return lines

    def _take(self) -> bytes:
        line = bytes(self._pending)
        self._pending.clear()
        self._overflow = False
        return line

    def rest(self) -> list[bytes]:
        return [self._take()] if self._pending else []


def _claim(fd: int, diversion: Callable[[], int]) -> tuple[int, Callable[[], None]]:
    """A private duplicate of `fd`, with `fd` itself pointed at `diversion()`; undone by the callable."""
    import fcntl

    private = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
    try:
        spare = diversion()
        os.dup2(spare, fd)
        os.close(spare)
    except OSError:
        return private, lambda: None  # served in place: the wire is still on fd

    def restore() -> None:
        with contextlib.suppress(OSError):
            os.dup2(private, fd)

    return private, restore


@contextlib.asynccontextmanager
async def stdio_transport(
    log: JsonLog, *, stdin_fd: int | None = None, stdout_fd: int | None = None
) -> AsyncIterator[tuple[Any, Any]]:
    """(read stream, write stream) for `Server.run`, over stdin/stdout (or the given descriptors)."""
    import anyio
    from mcp.shared.message import SessionMessage

    restores: list[Callable[[], None]] = []
    if stdin_fd is None:
        stdin_fd, restore = _claim(0, lambda: os.open(os.devnull, os.O_RDONLY))
        restores.append(restore)
    if stdout_fd is None:
        stdout_fd, restore = _claim(1, lambda: os.dup(2))
        restores.append(restore)
    read_in, read_out = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_in, write_out = anyio.create_memory_object_stream[SessionMessage](0)
    answers = write_in.clone()
    reader_fd, writer_fd = stdin_fd, stdout_fd

    async def handle(line: bytes) -> None:
        if not line.strip():
            return
        screened = screen(line.rstrip(b"\r"))
        if isinstance(screened, Refused):
            log.warn(
                "stdio_line_refused",
                f"a line on stdin was refused: {screened.reason}; answered {screened.code}",
            )
            await answers.send(SessionMessage(screened.answer()))
        else:
            await read_in.send(screened)

    async def read_lines() -> None:
        lines = _Lines()
        async with read_in, answers:
            while True:
                data = await anyio.to_thread.run_sync(os.read, reader_fd, _CHUNK, abandon_on_cancel=True)
                if not data:
                    break
                for line in lines.feed(data):
                    await handle(line)
            for line in lines.rest():
                await handle(line)

    async def write_lines() -> None:
        async with write_out:
            async for message in write_out:
                payload = serialize(message.message)
                await anyio.to_thread.run_sync(_write_all, writer_fd, payload)

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(read_lines)
            tg.start_soon(write_lines)
            async with write_in:
                yield read_out, write_in
            tg.cancel_scope.cancel()
    finally:
        for restore in restores:
            restore()


def _write_all(fd: int, payload: bytes) -> None:
    view = memoryview(payload)
    while view:
        view = view[os.write(fd, view) :]

"""One JSON line per event (docs/operations.md).

Info lines go to stdout and errors to stderr; under stdio, where stdout belongs
to the protocol, everything goes to stderr. Only an allowlisted set of context
keys is ever written, so memory content, queries, tags and conversation ids
cannot reach a log line by accident.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sys
import threading
from collections.abc import Iterable, Iterator
from typing import Any, TextIO

from mcp_memory.core.echo import strip_echoes
from mcp_memory.core.errors import MemoryServerError

#: The context a line may carry: names, counts and fixed words, never content, a query or a
#: conversation id. The last six are the hook tool's (server/hooks/tool.py), as the hook command
#: writes them (server/hooks/events.py `log`): which hook, which setting and what it takes.
ALLOWED_CONTEXT = frozenset(
    {"tenant", "tool", "method", "key", "ms", "ok", "inConversation", "shards", "status", "attempt", "signal", "source"}
    | {"hook", "setting", "expected", "using", "reason", "seconds"}
)


class JsonLog:
    """Writes `{"level", "event", ...context}` lines. Streams are looked up at write
    time unless given, so a test (or stdio's stdout diversion) sees every line."""

    def __init__(self, out: TextIO | None = None, err: TextIO | None = None, *, stdio: bool = False) -> None:
        self._out = out
        self._err = err
        self._stdio = stdio
        self._lock = threading.Lock()

    @property
    def out(self) -> TextIO:
        if self._stdio:
            return self.err
        return self._out if self._out is not None else sys.stdout

    @property
    def err(self) -> TextIO:
        return self._err if self._err is not None else sys.stderr

    def _write(self, stream: TextIO, record: dict[str, Any]) -> None:
        line = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
        with self._lock:
            try:
                stream.write(line + "\n")
                stream.flush()
            except (OSError, ValueError):
                pass  # a closed stream must never take a request down with it

    @staticmethod
    def _context(context: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in context.items() if k in ALLOWED_CONTEXT and v is not None}

    def info(self, event: str, **context: Any) -> None:
        self._write(self.out, {"level": "info", "event": event, **self._context(context)})

    def warn(self, event: str, message: str, **context: Any) -> None:
        self._write(self.err, {"level": "warn", "event": event, "message": message, **self._context(context)})

    def error(self, event: str, error: BaseException | str, *, sent: Iterable[str] = (), **context: Any) -> None:
        """An error line; any echo of the `sent` values (what the failed call was given,
        e.g. memory content or a query) is taken out of the message first."""
        record: dict[str, Any] = {"level": "error", "event": event, "message": strip_echoes(str(error), sent)}
        if isinstance(error, BaseException) and not isinstance(error, MemoryServerError):
            record["type"] = type(error).__name__
        record.update(self._context(context))
        self._write(self.err, record)


class NullLog(JsonLog):
    """Discards everything (library use, some tests)."""

    def _write(self, stream: TextIO, record: dict[str, Any]) -> None:
        return None


class _JsonLines(logging.Handler):
    """Turns the SDK's and uvicorn's warnings into our JSON lines.

    Only the message is kept, never a traceback: a stack can quote request
    data, and the log must never carry memory content or queries.
    """

    def __init__(self, log: JsonLog) -> None:
        super().__init__(logging.WARNING)
        self.log = log

    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = record.getMessage()
        except Exception:  # a malformed record must not break serving
            message = str(record.msg)
        if record.levelno >= logging.ERROR:
            self.log.error("server_error", message, source=record.name)
        else:
            self.log.warn("server_warning", message, source=record.name)


@contextlib.contextmanager
def library_logs_as_json(log: JsonLog) -> Iterator[None]:
    """While serving, the `mcp` and `uvicorn` loggers write JSON lines, not text."""
    handler = _JsonLines(log)
    loggers = [logging.getLogger(name) for name in ("mcp", "uvicorn")]
    saved = [(logger, logger.propagate) for logger in loggers]
    for logger in loggers:
        logger.addHandler(handler)
        logger.propagate = False
    try:
        yield
    finally:
        for logger, propagate in saved:
            logger.removeHandler(handler)
            logger.propagate = propagate

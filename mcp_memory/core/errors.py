"""The error tree. Every error a user can see is one of these, with a message
that names the field, header or variable at fault and never a secret.

    MemoryServerError
    ├── ConfigError          a setting is missing or malformed (exit code 2)
    ├── InvalidArgument      a tool or command argument is refused (nothing written)
    ├── ContextError         a tenant / conversation value is refused (header, flag, env)
    ├── StartupError         storage or model cannot be opened as configured
    ├── StoreError           a storage operation failed
    │   ├── PreconditionFailed   a conditional (CAS) write did not apply
    │   └── BudgetExceeded       a memory is too large for the store's metadata budget
    │                            (also an InvalidArgument: the caller's input, refused)
    ├── EmbeddingError       the embedder failed or returned an unusable vector
    └── DocsError            the documentation library (search_docs) could not be searched
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: importing typing costs every hook process (docs/hooks.md#how-it-is-fast)
if TYPE_CHECKING:
    from collections.abc import Callable


class MemoryServerError(Exception):
    """Base of every error this package raises on purpose."""


class ConfigError(MemoryServerError):
    """A configuration value is missing or malformed; the message names the variable."""


#: Where an argument refusal names its field; each edge puts its own spelling there.
FIELD = "{field}"


class InvalidArgument(MemoryServerError):
    """An argument was refused before anything ran; the message names the field.

    Raised where the edge's spelling is unknown (the rules, the service), the message opens
    with `{field}` and gives `field`: each edge words it (`worded`) in its own terms, the
    CLI as its flag; `str()` spells it as the tools do, in backquotes.
    """

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field

    def worded(self, name: Callable[[str], str]) -> str:
        message = str(self.args[0]) if self.args else ""
        if self.field and message.startswith(FIELD):  # only there: an echoed value may hold the same text
            return name(self.field) + message[len(FIELD) :]
        return message

    def __str__(self) -> str:
        return self.worded(lambda field: f"`{field}`")


class ContextError(MemoryServerError):
    """A tenant or conversation value was refused; the message names where it came from."""


class StartupError(MemoryServerError):
    """Storage or the embedding model cannot be opened as configured."""


class StoreError(MemoryServerError):
    """A storage backend failed."""


class PreconditionFailed(StoreError):
    """A conditional write (if-match / if-none-match) did not apply."""


class BudgetExceeded(StoreError, InvalidArgument):
    """A memory does not fit the store's metadata budget.

    The store finds it, but the cause is what the caller sent: each edge refuses it as
    bad input (naming the field and the limit), never as a store that failed.
    """


class EmbeddingError(MemoryServerError):
    """The embedder failed, or returned a vector that cannot be used."""


class DocsError(MemoryServerError):
    """The knowledge base behind search_docs failed or answered something unusable."""

"""Settings, by component: each section's shape, defaults and reader in a module of its own.

    store.py      the backend, why it was chosen, what it needs (stores.BACKENDS rows)
    embedding.py  the provider, its model and width, what it needs (embedders.PROVIDERS rows)
    recall.py     the relevance floor, the HIGH mark, the retrieval
    serve.py      where serve-http listens, its timeouts, OAuth, call limits, metrics, web view
    settings.py   `Settings`: every section in one object, read in one fixed order; and the two
                  small sections: the access counters, and the caller of serve-stdio and the CLI

This module itself is how a variable is read: `Env`, trimmed (blank means the default), then
checked as its kind is spelled, so a number, a ratio or a flag is refused in the same words
whichever section asks; it is the one reader of the environment, the hook's too
(server/hooks/events.py). Importing it imports none of the sections: each name in _LAZY loads
its module on first use (PEP 562), so the hook loads no section, and a reader of one section
loads only that one. The variables are listed in docs/configuration.md.
"""

from __future__ import annotations

import re
import sys

TYPE_CHECKING = False  # not typing's: importing typing costs every hook process (docs/hooks.md#how-it-is-fast)
if TYPE_CHECKING:
    from collections.abc import Mapping

    from mcp_memory.config.serve import CallLimits as CallLimits
    from mcp_memory.config.serve import HttpLimits as HttpLimits
    from mcp_memory.config.serve import MetricsSettings as MetricsSettings
    from mcp_memory.config.serve import OAuthSettings as OAuthSettings
    from mcp_memory.config.settings import Settings as Settings
    from mcp_memory.core.errors import ConfigError
    from mcp_memory.core.redact import redact_url as redact_url

SECTIONS = ("store", "embedding", "recall", "counters", "caller", "serve")
#: What `open_service()` reads: a library script that remembers needs no caller and no server.
SERVICE_SECTIONS = ("store", "embedding", "recall", "counters")

#: name -> the module that defines it, imported on first use
_LAZY = {
    "Settings": "mcp_memory.config.settings",
    "CallLimits": "mcp_memory.config.serve",
    "HttpLimits": "mcp_memory.config.serve",
    "MetricsSettings": "mcp_memory.config.serve",
    "OAuthSettings": "mcp_memory.config.serve",
    "redact_url": "mcp_memory.core.redact",
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    __import__(module)  # not importlib.import_module: -X importtime and the import counts see this one
    value = getattr(sys.modules[module], name)
    globals()[name] = value
    return value


_INTEGER = re.compile(r"\+?[0-9]+")


def refused(message: str) -> ConfigError:
    """The ConfigError a refused value raises. Its module loads here, when a value is refused: the
    hook reads its variables through Env and imports no more than it needs (docs/hooks.md#how-it-is-fast)."""
    from mcp_memory.core.errors import ConfigError

    return ConfigError(message)


class Env:
    """The environment as the settings read it."""

    def __init__(self, environ: Mapping[str, str]) -> None:
        self.environ = environ

    def raw(self, name: str) -> str | None:
        """The trimmed value, None when unset or blank (blank means "use the default")."""
        value = self.environ.get(name)
        if value is None:
            return None
        value = value.strip()
        return value or None

    def integer(self, name: str, default: int, maximum: int | None = None, minimum: int = 1) -> int:
        raw = self.raw(name)
        if raw is None:
            return default
        value = int(raw) if _INTEGER.fullmatch(raw) else -1
        if maximum is not None:
            if not minimum <= value <= maximum:
                raise refused(f'{name} must be an integer between {minimum} and {maximum}, got "{raw}"')
        elif value < 1:
            raise refused(f'{name} must be a positive integer, got "{raw}"')
        return value

    def ratio(self, name: str, default: float) -> float:
        raw = self.raw(name)
        if raw is None:
            return default
        try:
            value = float(raw)
        except ValueError:
            value = float("nan")
        if not 0 < value <= 1:  # NaN fails too
            raise refused(f'{name} must be greater than 0 and at most 1, got "{raw}"')
        return value

    def flag(self, name: str) -> bool:
        raw = self.raw(name)
        if raw is None:
            return False
        if raw.lower() in ("1", "true", "yes", "on"):
            return True
        if raw.lower() in ("0", "false", "no", "off"):
            return False
        raise refused(f'{name} must be true or false, got "{raw}"')

    def required_together(self, names: tuple[str, ...], why: str) -> None:
        """Refuse, naming what is missing and what is set, unless every one of `names` is set."""
        missing = [name for name in names if self.raw(name) is None]
        if missing:
            present = [name for name in names if name not in missing]
            raise refused(f"{and_(missing)} required {why}" + (f" ({and_(present)} set)" if present else ""))


def one_of(names: tuple[str, ...]) -> str:
    """`"a", "b" or "c"`, for a message listing the accepted values."""
    quoted = [f'"{name}"' for name in names]
    return f"{', '.join(quoted[:-1])} or {quoted[-1]}"


def and_(names: list[str] | tuple[str, ...]) -> str:
    """`A`, `A and B`, `A, B and C`, and the verb that goes with them."""
    listed = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
    return f"{listed} {'is' if len(names) == 1 else 'are'}"


def scrub(url: str) -> str:
    """A refused URL fit for an error message: userinfo, query and fragment masked.

    Userinfo is cut at the *last* `@` before anything else, so a password holding an
    unescaped `/`, `?` or `#` is not split off and echoed.
    """
    scheme, sep, rest = url.partition("://")
    if not sep:
        scheme, rest = "", url
    if "@" in rest:
        rest = "***@" + rest.rsplit("@", 1)[1]
    rest = re.sub(r"([?#]).*", r"\1***", rest, count=1, flags=re.DOTALL)
    return scheme + sep + rest

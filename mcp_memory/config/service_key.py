"""The key of the settings a service answers with: the store, the embedding and recall sections.

A CLI command goes through a running serve-stdio only when this key is the same in both
processes (server/hooks/commands.py): a command run with another floor, model or retrieval
opens the store itself and answers by its own settings (docs/cli.md#a-running-server-answers).
Only a digest of it leaves the process.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import fields
from pathlib import PurePath
from typing import Any

#: The sections that decide what a service call answers (the counters and the caller do not).
SECTIONS = ("store", "embedding", "recall")


def _plain(value: Any) -> str:
    """One value in words that are the same in every process (a set's repr follows its hashes)."""
    if isinstance(value, (set, frozenset)):
        return repr(sorted(_plain(v) for v in value))
    if isinstance(value, PurePath):  # a relative MEMORY_DB_PATH names another file in another folder
        return repr(os.path.abspath(value))
    return repr(str(value)) if not isinstance(value, (bool, int, float, type(None))) else repr(value)


def service_key(settings: Any) -> str:
    """A digest of every field of the SECTIONS of `settings`."""
    text = "\n".join(
        f"{name}.{f.name}={_plain(getattr(section, f.name))}"
        for name in SECTIONS
        for section in [getattr(settings, name)]
        for f in fields(section)
    )
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]

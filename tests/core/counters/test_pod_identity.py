"""Access counters: identity (see tests/core/counters/conftest.py for the fixtures)."""

from __future__ import annotations

import re

import pytest

from mcp_memory.core.counters.tracker import AccessCounters, new_pod_id
from tests.core.counters.support import FaultyStore, Logs


def test_a_pod_id_is_the_hostname_and_eight_random_hex_characters() -> None:
    first, second = new_pod_id("web-7f9c"), new_pod_id("web-7f9c")
    assert re.fullmatch(r"web-7f9c-[0-9a-f]{8}", first)
    assert first != second
    assert re.fullmatch(r"a-b-c-[0-9a-f]{8}", new_pod_id("a/b c"))


def test_a_pod_id_that_would_break_a_key_is_refused(store: FaultyStore, logs: Logs) -> None:
    with pytest.raises(ValueError):
        AccessCounters(store, pod_id="a/b", log=logs.log)

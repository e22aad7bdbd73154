"""The object-store key layout (docs/storage.md)."""

from __future__ import annotations

import re

from mcp_memory.core.object_keys import conversation_digest

# --------------------------------------------------------------------------- conversation_digest


def test_a_conversation_digest_is_16_lowercase_hex_characters() -> None:
    digest = conversation_digest("slack:C1:1723.45")
    assert re.fullmatch(r"[0-9a-f]{16}", digest)


def test_a_conversation_digest_is_stable_across_calls_and_releases() -> None:
    # Pinned: the digest is part of stored index keys, so it must never change.
    assert conversation_digest("chat:0d1e-4f") == conversation_digest("chat:0d1e-4f")
    assert conversation_digest("chat:0d1e-4f") == "4b406e5b31984997"


def test_conversations_differing_in_one_escaped_byte_have_different_digests() -> None:
    assert conversation_digest("slack:C1/x#y%25") != conversation_digest("slack:C1/x#y%26")

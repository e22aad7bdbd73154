"""Tenant and conversation values from headers, flags and variables (B §3, A8, A10)."""

from __future__ import annotations

import re

import pytest

from mcp_memory.core.errors import ContextError
from mcp_memory.core.identity import (
    caller_from_headers,
    caller_from_options,
    conversation_digest,
    parse_conversation,
    parse_tenant,
)
from mcp_memory.core.model import Caller

TENANT_RULE = "must start with a letter or digit and contain only letters, digits, '.', '_' or '-'"
CONVERSATION_RULE = "may carry printable ASCII only, with no whitespace"

# --------------------------------------------------------------------------- tenant (B §3.3)


@pytest.mark.parametrize(
    ("raw", "tenant"),
    [
        ("agent-studio", "agent-studio"),
        ("opspresso.mcp_memory", "opspresso.mcp_memory"),
        ("a", "a"),
        ("Project1", "Project1"),
        ("a" * 128, "a" * 128),
        ("  demo  ", "demo"),
    ],
)
def test_a_well_formed_tenant_is_accepted_trimmed(raw: str, tenant: str) -> None:
    assert parse_tenant(raw, "x-memory-tenant") == tenant


@pytest.mark.parametrize("raw", ["../other", "a/b", ".", "..", "a b", "-leading", ".hidden", "not a slug!"])
def test_a_tenant_outside_the_slug_rule_is_refused_naming_the_header(raw: str) -> None:
    with pytest.raises(ContextError) as refused:
        parse_tenant(raw, "x-memory-tenant")
    assert str(refused.value) == f"x-memory-tenant {TENANT_RULE}"


def test_a_tenant_of_129_characters_is_too_long() -> None:
    with pytest.raises(ContextError) as refused:
        parse_tenant("a" * 129, "x-tenant-id")
    assert str(refused.value) == "x-tenant-id is too long (max 128 characters)"


def test_a_long_tenant_is_reported_as_too_long_before_its_characters_are_judged() -> None:
    with pytest.raises(ContextError, match="too long"):
        parse_tenant("테" * 129, "x-memory-tenant")


@pytest.mark.parametrize("raw", [None, "", "   "])
def test_a_missing_tenant_header_is_required_with_a_hint_where_to_set_it(raw: str | None) -> None:
    with pytest.raises(ContextError) as refused:
        parse_tenant(raw, "x-memory-tenant")
    assert str(refused.value) == ("x-memory-tenant header is required — set it on the MCP server entry in the registry")


def test_a_tenant_sent_twice_is_refused_as_sent_more_than_once() -> None:
    with pytest.raises(ContextError) as refused:
        parse_tenant(["acme", "other"], "x-memory-tenant")
    assert str(refused.value) == "x-memory-tenant was sent more than once"


def test_a_tenant_in_a_one_element_list_is_read_as_that_value() -> None:
    assert parse_tenant(["acme"], "x-memory-tenant") == "acme"


# --------------------------------------------------------------------------- conversation (B §3.4)


@pytest.mark.parametrize(
    ("raw", "conversation"),
    [
        ("chat:0d1e-4f", "chat:0d1e-4f"),
        (" slack:C1:1723.45 ", "slack:C1:1723.45"),
        ("api:9f2c1a:%ED%9A%8C%EC%9D%98", "api:9f2c1a:%ED%9A%8C%EC%9D%98"),
        ("a2a:client:ctx-1", "a2a:client:ctx-1"),
        ("a" * 512, "a" * 512),
    ],
)
def test_a_well_formed_conversation_is_accepted_trimmed(raw: str, conversation: str) -> None:
    assert parse_conversation(raw) == conversation


@pytest.mark.parametrize("raw", [None, "", "   ", "\t"])
def test_an_absent_or_blank_conversation_means_no_conversation(raw: str | None) -> None:
    assert parse_conversation(raw) is None


def test_a_conversation_of_513_characters_is_too_long() -> None:
    with pytest.raises(ContextError) as refused:
        parse_conversation("a" * 513)
    assert str(refused.value) == "x-conversation-id is too long (max 512 characters)"


@pytest.mark.parametrize("raw", ["has space", "회의록", "chat:1\nchat:2", "chat:\x7f"])
def test_a_conversation_outside_printable_ascii_is_refused_naming_the_header(raw: str) -> None:
    with pytest.raises(ContextError) as refused:
        parse_conversation(raw)
    assert str(refused.value) == f"x-conversation-id {CONVERSATION_RULE}"


def test_a_conversation_sent_twice_is_refused_as_sent_more_than_once() -> None:
    with pytest.raises(ContextError) as refused:
        parse_conversation(["chat:1", "chat:2"])
    assert str(refused.value) == "x-conversation-id was sent more than once"


def test_duplicates_joined_into_one_value_fail_the_character_rule() -> None:
    with pytest.raises(ContextError, match=re.escape(CONVERSATION_RULE)):
        parse_conversation("chat:1, chat:2")


# --------------------------------------------------------------------------- caller_from_headers (B §3.2)


def test_the_explicit_tenant_header_wins_over_the_stamped_one() -> None:
    assert caller_from_headers("acme", "studio-project", None) == Caller("acme", None)


def test_the_stamped_tenant_is_used_when_no_explicit_one_is_sent() -> None:
    assert caller_from_headers(None, "studio-project", "chat:1") == Caller("studio-project", "chat:1")


def test_a_blank_explicit_tenant_gives_way_to_the_stamped_one() -> None:
    assert caller_from_headers("   ", " studio-project ", None) == Caller("studio-project", None)


def test_a_malformed_stamped_tenant_is_reported_under_its_own_header_name() -> None:
    with pytest.raises(ContextError) as refused:
        caller_from_headers(None, "../other", None)
    message = str(refused.value)
    assert message == f"x-tenant-id {TENANT_RULE}"
    assert "x-memory-tenant" not in message


def test_a_malformed_explicit_tenant_is_refused_even_beside_a_good_stamped_one() -> None:
    with pytest.raises(ContextError, match=f"^x-memory-tenant {re.escape(TENANT_RULE)}$"):
        caller_from_headers("a/b", "studio-project", None)


@pytest.mark.parametrize(("explicit", "stamped"), [(None, None), ("", ""), ("  ", "\t")])
def test_with_no_tenant_header_the_explicit_header_is_named_as_required(
    explicit: str | None, stamped: str | None
) -> None:
    with pytest.raises(ContextError) as refused:
        caller_from_headers(explicit, stamped, None)
    message = str(refused.value)
    assert "x-memory-tenant" in message
    assert "required" in message


def test_the_conversation_is_judged_before_the_tenant() -> None:
    with pytest.raises(ContextError) as refused:
        caller_from_headers("../other", None, "has space")
    assert str(refused.value) == f"x-conversation-id {CONVERSATION_RULE}"


def test_a_missing_tenant_is_still_reported_after_a_good_conversation() -> None:
    with pytest.raises(ContextError, match="x-memory-tenant header is required"):
        caller_from_headers(None, None, "chat:1")


def test_an_explicit_tenant_header_sent_twice_is_refused() -> None:
    with pytest.raises(ContextError) as refused:
        caller_from_headers(["acme", "other"], None, None)
    assert str(refused.value) == "x-memory-tenant was sent more than once"


def test_a_stamped_tenant_header_sent_twice_is_refused() -> None:
    with pytest.raises(ContextError) as refused:
        caller_from_headers(None, ["acme", "other"], None)
    assert str(refused.value) == "x-tenant-id was sent more than once"


def test_a_conversation_header_sent_twice_is_refused() -> None:
    with pytest.raises(ContextError) as refused:
        caller_from_headers("acme", None, ["chat:1", "chat:2"])
    assert str(refused.value) == "x-conversation-id was sent more than once"


# --------------------------------------------------------------------------- caller_from_options (A8)


def test_cli_options_build_the_caller() -> None:
    assert caller_from_options(" acme ", " chat:1 ") == Caller("acme", "chat:1")
    assert caller_from_options("acme", None) == Caller("acme", None)


def test_a_bad_tenant_option_is_refused_naming_the_flag() -> None:
    with pytest.raises(ContextError) as refused:
        caller_from_options("../other", None)
    assert str(refused.value) == f"--tenant {TENANT_RULE}"


def test_a_missing_tenant_option_is_required_naming_the_flag() -> None:
    with pytest.raises(ContextError) as refused:
        caller_from_options(None, None)
    assert str(refused.value) == "--tenant is required"


def test_a_bad_conversation_option_is_refused_naming_the_flag() -> None:
    with pytest.raises(ContextError) as refused:
        caller_from_options("acme", "has space")
    assert str(refused.value) == f"--conversation {CONVERSATION_RULE}"


def test_the_stdio_default_tenant_applies_only_when_no_tenant_is_given() -> None:
    assert caller_from_options(None, None, default_tenant="local") == Caller("local", None)
    assert caller_from_options("  ", None, default_tenant="local") == Caller("local", None)
    assert caller_from_options("acme", None, default_tenant="local") == Caller("acme", None)


def test_a_variable_name_can_stand_in_for_the_flag_in_messages() -> None:
    with pytest.raises(ContextError, match="^MEMORY_TENANT is too long"):
        caller_from_options("a" * 129, None, tenant_name="MEMORY_TENANT")


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

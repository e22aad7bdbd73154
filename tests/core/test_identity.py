"""Tenant and conversation values from headers, flags and variables (docs/context.md, docs/http.md).

Which headers carry them, and which one wins, is tests/server/test_headers.py."""

from __future__ import annotations

import re

import pytest

from mcp_memory.core.errors import ContextError
from mcp_memory.core.identity import caller_from_options, parse_conversation, parse_tenant
from mcp_memory.core.model import Caller

TENANT_RULE = "must start with a letter or digit and contain only letters, digits, '.', '_' or '-'"
CONVERSATION_RULE = "may carry printable ASCII only, with no whitespace"

# --------------------------------------------------------------------------- tenant (docs/context.md)


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


def test_a_tenant_sent_twice_is_refused_as_sent_more_than_once() -> None:
    with pytest.raises(ContextError) as refused:
        parse_tenant(["acme", "other"], "x-memory-tenant")
    assert str(refused.value) == "x-memory-tenant was sent more than once"


def test_a_tenant_in_a_one_element_list_is_read_as_that_value() -> None:
    assert parse_tenant(["acme"], "x-memory-tenant") == "acme"


# --------------------------------------------------------------------------- conversation (docs/context.md)


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
    assert parse_conversation(raw, "x-conversation-id") == conversation


@pytest.mark.parametrize("raw", [None, "", "   ", "\t"])
def test_an_absent_or_blank_conversation_means_no_conversation(raw: str | None) -> None:
    assert parse_conversation(raw, "x-conversation-id") is None


def test_a_conversation_of_513_characters_is_too_long() -> None:
    with pytest.raises(ContextError) as refused:
        parse_conversation("a" * 513, "x-conversation-id")
    assert str(refused.value) == "x-conversation-id is too long (max 512 characters)"


@pytest.mark.parametrize("raw", ["has space", "회의록", "chat:1\nchat:2", "chat:\x7f"])
def test_a_conversation_outside_printable_ascii_is_refused_naming_the_header(raw: str) -> None:
    with pytest.raises(ContextError) as refused:
        parse_conversation(raw, "x-conversation-id")
    assert str(refused.value) == f"x-conversation-id {CONVERSATION_RULE}"


def test_a_conversation_sent_twice_is_refused_as_sent_more_than_once() -> None:
    with pytest.raises(ContextError) as refused:
        parse_conversation(["chat:1", "chat:2"], "x-conversation-id")
    assert str(refused.value) == "x-conversation-id was sent more than once"


def test_duplicates_joined_into_one_value_fail_the_character_rule() -> None:
    with pytest.raises(ContextError, match=re.escape(CONVERSATION_RULE)):
        parse_conversation("chat:1, chat:2", "x-conversation-id")


# --------------------------------------------------------------------------- caller_from_options (docs/context.md)


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

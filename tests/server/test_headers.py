"""The caller of an HTTP request, from its headers (docs/context.md, docs/http.md)."""

from __future__ import annotations

import re

import pytest

from mcp_memory.core.errors import ContextError
from mcp_memory.core.model import Caller
from mcp_memory.server.http.headers import caller_from_headers, parse_tenant_header

TENANT_RULE = "must start with a letter or digit and contain only letters, digits, '.', '_' or '-'"
CONVERSATION_RULE = "may carry printable ASCII only, with no whitespace"


@pytest.mark.parametrize("raw", [None, "", "   "])
def test_a_missing_tenant_header_is_required_with_a_hint_where_to_set_it(raw: str | None) -> None:
    with pytest.raises(ContextError) as refused:
        parse_tenant_header(raw, "x-memory-tenant")
    assert str(refused.value) == (
        "x-memory-tenant header is required: send the tenant's name in it with every request "
        "(an MCP client sends it from the headers of its server entry)"
    )


# --------------------------------------------------------------------------- caller_from_headers (docs/context.md)


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


@pytest.mark.parametrize(
    ("explicit", "stamped", "conversation", "named"),
    [
        ("acme", ["acme", "other"], None, "x-tenant-id"),  # the explicit header would win, yet the twice is refused
        (["acme", "other"], "acme", None, "x-memory-tenant"),
        ("   ", ["acme", "acme"], None, "x-tenant-id"),  # even the same value twice
        ("acme", "acme", ["chat:1", "chat:1"], "x-conversation-id"),
    ],
)
def test_a_header_sent_twice_is_refused_whether_or_not_the_other_tenant_header_is_there(
    explicit: object, stamped: object, conversation: object, named: str
) -> None:
    with pytest.raises(ContextError) as refused:
        caller_from_headers(explicit, stamped, conversation)  # type: ignore[arg-type]
    assert str(refused.value) == f"{named} was sent more than once"

"""Who may call the HTTP endpoint: the bearer check (docs/http.md, truth table), which
hosts count as loopback, and the start-up lines describing the auth mode."""

from __future__ import annotations

import pytest

from mcp_memory.server.http.auth import auth_lines, bearer_matches, is_loopback

KEY = "s3cret"


@pytest.mark.parametrize(
    ("header", "allowed"),
    [
        ("Bearer s3cret", True),
        ("bearer s3cret", True),
        ("BEARER  s3cret", True),
        ("Bearer wrong", False),
        ("Bearer s3cret ", False),
        ("s3cret", False),
        ("Basic s3cret", False),
        (None, False),
        ("Bearer ", False),
        ("Bearer s", False),
        ("Bearer " + "s" * 500, False),
        ("", False),
        ("Bearer\ts3cret", False),
        ("Bearer s3cretX", False),
        ("Bearer S3CRET", False),
    ],
)
def test_the_bearer_check_follows_the_reference_truth_table(header: str | None, allowed: bool) -> None:
    assert bearer_matches(header, KEY) is allowed


def test_raw_header_bytes_are_checked_the_same_way() -> None:
    assert bearer_matches(b"Bearer s3cret", KEY)
    assert not bearer_matches(b"Bearer s3cre", KEY)


def test_a_non_ascii_key_matches_its_utf8_bytes() -> None:
    assert bearer_matches("Bearer clé", "clé")
    assert bearer_matches("Bearer clé".encode(), "clé")
    assert not bearer_matches("Bearer cle", "clé")


@pytest.mark.parametrize("key", [None, ""])
def test_without_a_key_everyone_is_allowed(key: str | None) -> None:
    assert bearer_matches(None, key)
    assert bearer_matches("Basic whatever", key)


@pytest.mark.parametrize("host", ["127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost", "LOCALHOST"])
def test_loopback_hosts(host: str) -> None:
    assert is_loopback(host)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "10.0.0.7", "mcp-memory.default.svc", "example.com"])
def test_hosts_other_machines_can_reach(host: str) -> None:
    assert not is_loopback(host)


def test_with_a_key_the_auth_line_says_a_bearer_token_is_required_and_nothing_is_warned() -> None:
    out, err = auth_lines("s3cret", "0.0.0.0")
    assert out == ["auth: MCP_API_KEY is set; every request must present it as a bearer token"]
    assert err == []
    assert "s3cret" not in " ".join(out)


def test_without_a_key_stderr_warns_that_any_caller_is_answered() -> None:
    out, err = auth_lines(None, "127.0.0.1")
    assert out == []
    assert len(err) == 1
    assert "MCP_API_KEY is NOT set" in err[0] and "answers ANY caller" in err[0]


def test_without_a_key_on_a_non_loopback_host_the_warning_is_louder() -> None:
    _, err = auth_lines(None, "0.0.0.0")
    assert len(err) == 2
    assert "answers ANY caller" in err[0]
    assert err[1].startswith("WARNING: HOST=0.0.0.0 is not a loopback address")
    assert "Set MCP_API_KEY" in err[1]

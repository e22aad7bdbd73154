"""A flood of random opaque tokens cannot make one introspection call each: a client address
may cause a burst of failed authentications, then one a second; past that its unknown tokens
are refused without an outbound call. Tokens already cached still work, other addresses are
not affected, and refusals are cached apart so they never push good tokens out."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from mcp_memory.core.logs import NullLog
from mcp_memory.server.http import introspection
from mcp_memory.server.http.introspection import (
    ALL_FAILURE_BURST,
    ALL_FAILURES_PER_S,
    FAILURE_BURST,
    IntrospectionVerifier,
    TokenVerifiers,
)
from mcp_memory.server.http.oauth import JwtVerifier, TokenRefused
from tests.server.test_introspection import Clock, description, post, service, settings_for
from tests.support.http_support import serving
from tests.support.issuer import Issuer, issuer_server

TOKENS = 500


@pytest.fixture
async def issuer() -> AsyncIterator[Issuer]:
    async with issuer_server() as running:
        running.publish("k1")
        yield running


async def refused(verifier: IntrospectionVerifier, token: str, client: str) -> str:
    try:
        await verifier.check(token, client)
    except TokenRefused as exc:
        return str(exc)
    raise AssertionError("a random token was accepted")


async def test_500_random_opaque_tokens_from_one_address_make_a_bounded_number_of_calls(issuer: Issuer) -> None:
    clock = Clock()
    verifier = IntrospectionVerifier(settings_for(issuer), NullLog(), clock=clock)
    reasons = [await refused(verifier, secrets.token_urlsafe(24), "203.0.113.9") for _ in range(TOKENS)]
    assert issuer.introspections == FAILURE_BURST
    assert reasons[0] == "the authorization server says the token is not active"
    assert reasons[-1] == "too many failed authentications from this address; try again in 1 s"
    clock.now += 5  # five seconds later: five more may be asked about
    for _ in range(TOKENS):
        await refused(verifier, secrets.token_urlsafe(24), "203.0.113.9")
    assert issuer.introspections == FAILURE_BURST + 5
    # another address has a budget of its own, and a good token is still introspected for it
    good = issuer.opaque()
    assert (await verifier.check(good, "198.51.100.4")).client_id == "agent"
    assert issuer.introspections == FAILURE_BURST + 6


async def test_a_token_cached_before_the_flood_still_works_from_the_flooding_address(issuer: Issuer) -> None:
    clock = Clock()
    verifier = IntrospectionVerifier(settings_for(issuer), NullLog(), clock=clock)
    good = issuer.opaque()
    await verifier.check(good, "203.0.113.9")
    for _ in range(TOKENS):
        await refused(verifier, secrets.token_urlsafe(24), "203.0.113.9")
    assert (await verifier.check(good, "203.0.113.9")).client_id == "agent"
    assert issuer.introspections == 1 + FAILURE_BURST


async def test_refused_tokens_never_push_good_ones_out_of_the_cache(issuer: Issuer, monkeypatch) -> None:
    monkeypatch.setattr(introspection, "MAX_CACHED", 3)
    monkeypatch.setattr(introspection, "MAX_REFUSED", 3)
    verifier = IntrospectionVerifier(settings_for(issuer), NullLog(), clock=Clock())
    good = issuer.opaque()
    await verifier.check(good)
    for i in range(10):  # no client address: the budget is not in play, only the caches
        await refused(verifier, f"bad-token-{i}", None)  # type: ignore[arg-type]
    before = issuer.introspections
    await verifier.check(good)
    assert issuer.introspections == before  # still cached
    await refused(verifier, "bad-token-9", None)  # type: ignore[arg-type]
    assert issuer.introspections == before  # a recent refusal is cached too


async def test_a_refused_token_is_refused_from_the_cache_for_a_minute(issuer: Issuer) -> None:
    clock = Clock()
    verifier = IntrospectionVerifier(settings_for(issuer), NullLog(), clock=clock)
    bad = issuer.opaque(active=False)
    await refused(verifier, bad, "203.0.113.9")
    clock.now += 59
    await refused(verifier, bad, "203.0.113.9")
    assert issuer.introspections == 1
    clock.now += 2
    await refused(verifier, bad, "203.0.113.9")
    assert issuer.introspections == 2


async def test_over_http_the_flooding_client_gets_401_saying_why(tmp_path: Path, issuer: Issuer) -> None:
    settings = settings_for(issuer)
    verifier = TokenVerifiers(
        JwtVerifier(settings, NullLog()), IntrospectionVerifier(settings, NullLog(), clock=Clock())
    )
    async with serving(await service(tmp_path), oauth=settings, verifier=verifier) as running:
        answers = [await post(running, secrets.token_urlsafe(24), **{"x-memory-tenant": "acme"}) for _ in range(30)]
    assert [a.status_code for a in answers] == [401] * 30
    assert issuer.introspections == FAILURE_BURST
    assert description(answers[0]) == "the authorization server says the token is not active"
    assert description(answers[-1]).startswith("too many failed authentications from this address; try again in ")


async def test_random_tokens_spread_over_100_addresses_make_a_bounded_number_of_calls(issuer: Issuer) -> None:
    # Issue 36, defect 10: 300 tokens from 100 loopback addresses made 300 calls (3 each, under
    # every address's own budget). All addresses together now have one budget too.
    clock = Clock()
    verifier = IntrospectionVerifier(settings_for(issuer), NullLog(), clock=clock)
    good = issuer.opaque()
    await verifier.check(good, "127.0.0.200")
    reasons = [await refused(verifier, secrets.token_urlsafe(24), f"127.0.0.{n % 100 + 1}") for n in range(300)]
    assert issuer.introspections == 1 + ALL_FAILURE_BURST
    assert reasons[ALL_FAILURE_BURST - 1] == "the authorization server says the token is not active"
    assert reasons[ALL_FAILURE_BURST:] == ["too many failed authentications; try again in 1 s"] * (
        300 - ALL_FAILURE_BURST
    )
    assert (await verifier.check(good, "127.0.0.200")).client_id == "agent"  # cached: still served
    clock.now += 2  # two seconds later: ten more may be asked about, from any address
    for n in range(20):
        await refused(verifier, secrets.token_urlsafe(24), f"127.0.1.{n + 1}")
    assert issuer.introspections == 1 + ALL_FAILURE_BURST + 2 * ALL_FAILURES_PER_S

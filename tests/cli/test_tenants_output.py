"""What `mcp-memory` prints of every tenant at once, word for word: the tenants listing and the
compaction of all tenants, each saying where a bounded scan stopped (the results beneath the
words are tests/core/test_tenants.py's)."""

from __future__ import annotations

from mcp_memory.cli.render import print_compact_all, print_tenants


def test_the_readable_listing_says_where_it_stopped(capsys) -> None:
    from mcp_memory.core.tenants import TenantCount, TenantsResult

    print_tenants(TenantsResult([TenantCount("acme", 10_000, {"project": 10_000}, 0, True)], True, 1), False)
    out = capsys.readouterr().out
    assert "Stopped at 1 tenants: there are more, not listed here." in out
    assert "≥ 10000" in out and "a figure marked ≥ is a lower bound" in out
    print_tenants(TenantsResult([], False, 1000), False)
    assert "No tenant has any memories yet." in capsys.readouterr().out


def test_the_readable_compaction_names_the_failed_tenant(capsys) -> None:
    from mcp_memory.core.tenants import CompactAllResult

    print_compact_all(CompactAllResult([], [("beta", "refused")], True, 1, False), False)
    out = capsys.readouterr().out
    assert "error: compacting beta failed — refused" in out and "Stopped at 1 tenants" in out

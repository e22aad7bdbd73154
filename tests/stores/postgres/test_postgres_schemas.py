"""Deployments in different schemas of one database (the per-role-schema set-up
docs/backends.md recommends, `options=-csearch_path=<schema>,public`): pgvector is one
extension per database, created in the first deployment's schema, and every
other deployment still finds it there, starts, and keeps its memories apart."""

from __future__ import annotations

import io

from psycopg import sql

from mcp_memory.app import open_service
from mcp_memory.config import Settings
from mcp_memory.core.logs import JsonLog
from mcp_memory.core.model import Caller
from mcp_memory.server.protocol.tools import ToolLayer
from tests.support import pg_support

ACME = Caller("acme")


async def deployment(url: str) -> ToolLayer:
    service = await open_service(Settings.from_env({"DATABASE_URL": url, "EMBEDDING_PROVIDER": "fake"}))
    return ToolLayer(service, JsonLog(io.StringIO(), io.StringIO()))


async def test_two_deployments_in_two_schemas_of_one_database_both_start_and_stay_apart(pg_admin_url: str) -> None:
    with pg_support.fresh_database(pg_admin_url) as database:
        with pg_support.connect(database) as conn:
            for schema in ("team_a", "team_b"):
                conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
        url_a, url_b = pg_support.in_schema(database, "team_a"), pg_support.in_schema(database, "team_b")

        first = await deployment(url_a)  # creates pgvector, in team_a: the first schema on its path
        [(where,)] = pg_support.rows(
            database,
            "SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace "
            "WHERE e.extname = 'vector'",
        )
        assert where == "team_a"
        second = await deployment(url_b)  # its path (team_b, public) does not reach team_a
        try:
            assert not (await first.call("remember", {"content": "team A deploys on Tuesdays"}, ACME)).is_error
            assert not (await second.call("remember", {"content": "team B deploys on Fridays"}, ACME)).is_error
            found_a = await first.call("recall", {"query": "when does the team deploy"}, ACME)
            found_b = await second.call("recall", {"query": "when does the team deploy"}, ACME)
            stats_a = await first.call("memory_stats", {}, ACME)
        finally:
            await first.service.close()
            await second.service.close()
        assert "Tuesdays" in found_a.text and "Fridays" not in found_a.text
        assert "Fridays" in found_b.text and "Tuesdays" not in found_b.text
        assert stats_a.text == "[MEMORY] 1 memory for this project (project: 1)."
        assert pg_support.count(url_a, "memories") == 1 and pg_support.count(url_b, "memories") == 1

        again = await deployment(url_b)  # a restart adopts its own tables, not team_a's
        try:
            listed = await again.call("list_memories", {}, ACME)
        finally:
            await again.service.close()
        assert "Fridays" in listed.text and "Tuesdays" not in listed.text


async def test_a_deployment_in_its_own_schema_beside_one_in_public_gets_its_own_keyword_index_and_counts(
    pg_admin_url: str,
) -> None:
    """docs/backends.md: deployments in other schemas of one database start, "each with its own
    tables". The recommended path `<schema>,public` reaches public, so the start-up's looks for its
    tables, keyword index and term counts are made in its own schema: found through the path, a
    deployment in public had its tables adopted by the next one, memories and counts mixed."""
    with pg_support.fresh_database(pg_admin_url) as database:
        with pg_support.connect(database) as conn:
            conn.execute("CREATE SCHEMA team_b")
        first = await deployment(database)  # the default path: public
        second = await deployment(pg_support.in_schema(database, "team_b"))
        try:
            assert not (await first.call("remember", {"content": "public deploys on Tuesdays"}, ACME)).is_error
            assert not (await second.call("remember", {"content": "team B deploys on Fridays"}, ACME)).is_error
        finally:
            await first.service.close()
            await second.service.close()
        found = pg_support.rows(
            database,
            "SELECT schemaname, indexname FROM pg_indexes WHERE indexname = 'memories_keyword_vector' "
            "UNION ALL SELECT table_schema, table_name FROM information_schema.tables "
            "WHERE table_name IN ('memories', 'memory_terms') ORDER BY 1, 2",
        )
        assert found == [
            ("public", "memories"),
            ("public", "memories_keyword_vector"),
            ("public", "memory_terms"),
            ("team_b", "memories"),
            ("team_b", "memories_keyword_vector"),
            ("team_b", "memory_terms"),
        ]
        # one memory in each: a term both texts hold ("deploys") is counted once in each schema
        for schema in ("public", "team_b"):
            docs = pg_support.rows(database, f"SELECT term, docs FROM {schema}.memory_terms")
            assert docs and {count for _, count in docs} == {1}, (schema, docs)

"""A real PostgreSQL with pgvector for the tests, and small helpers around it.

The database is `TEST_DATABASE_URL` when that is set (its role must be able to
create schemas, databases and roles, and pgvector must be installable);
otherwise a throwaway server from the `pgserver` package (PostgreSQL 16 +
pgvector, unix socket, trust auth), started once per test session. If neither
works the PostgreSQL tests fail with the reason; they are never skipped.

Each test gets a fresh schema (`fresh_schema`), selected through the URL's
`options=-csearch_path=<schema>,public`, so the stores under test need no
schema parameter: the same code path a deployment uses.
"""

from __future__ import annotations

import tempfile
import uuid
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo


def start_pgserver(pgdata: Path | None = None) -> Any:
    """A running pgserver PostgresServer on a new data directory (deleted on cleanup())."""
    with warnings.catch_warnings():
        # platformdirs warns at import when XDG_RUNTIME_DIR is unset; harmless here.
        warnings.simplefilter("ignore")
        import pgserver

        return pgserver.get_server(pgdata or tempfile.mkdtemp(prefix="mcp-memory-pg-"), cleanup_mode="delete")


def stop_pgserver(server: Any) -> None:
    """Stop the server's postgres (a clean, fast shutdown), keeping its data directory."""
    from pgserver._commands import pg_ctl

    pg_ctl(["-w", "-m", "fast", "stop"], pgdata=server.pgdata, user=server.system_user)


def restart_pgserver(server: Any) -> None:
    """Start a stopped server again on the same socket directory (hence the same URL)."""
    server.ensure_postgres_running()


def with_options(url: str, **params: Any) -> str:
    """`url` as a libpq connection string with these parameters set or replaced."""
    return make_conninfo(url, **params)


def in_schema(url: str, schema: str) -> str:
    return with_options(url, options=f"-csearch_path={schema},public")


def connect(url: str) -> psycopg.Connection[Any]:
    return psycopg.connect(url, autocommit=True)


def prepare_admin(url: str) -> None:
    """Make sure pgvector exists in the admin database (the per-test schemas find it via `public`)."""
    with connect(url) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")


@contextmanager
def fresh_schema(admin_url: str) -> Iterator[str]:
    """A new empty schema, dropped afterwards; yields a URL whose search_path selects it."""
    schema = f"mcpm_{uuid.uuid4().hex[:12]}"
    with connect(admin_url) as conn:
        conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
    try:
        yield in_schema(admin_url, schema)
    finally:
        with connect(admin_url) as conn:
            conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(schema)))


@contextmanager
def fresh_database(admin_url: str, owner: str | None = None) -> Iterator[str]:
    """A new empty database (no pgvector in it yet), dropped afterwards; yields its URL."""
    name = f"mcpm_{uuid.uuid4().hex[:12]}"
    statement = sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name))
    if owner:
        statement = sql.SQL("{} OWNER {}").format(statement, sql.Identifier(owner))
    with connect(admin_url) as conn:
        conn.execute(statement)
    try:
        yield with_options(admin_url, dbname=name)
    finally:
        with connect(admin_url) as conn:
            conn.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))


@contextmanager
def plain_role(admin_url: str) -> Iterator[str]:
    """A login role without superuser; yields its name."""
    name = f"mcpm_role_{uuid.uuid4().hex[:8]}"
    with connect(admin_url) as conn:
        conn.execute(sql.SQL("CREATE ROLE {} LOGIN NOSUPERUSER").format(sql.Identifier(name)))
    try:
        yield name
    finally:
        with connect(admin_url) as conn:
            conn.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(name)))


def rows(url: str, statement: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    with connect(url) as conn:
        return conn.execute(statement, params).fetchall()  # type: ignore[arg-type]


def count(url: str, table: str) -> int:
    return int(rows(url, sql.SQL("SELECT count(*) FROM {}").format(sql.Identifier(table)).as_string())[0][0])


def database_name(url: str) -> str:
    return str(conninfo_to_dict(url).get("dbname") or "")

"""A database password never shows, whole or in pieces, whatever shape its URL
takes: generated passwords (every printable ASCII character but `*`, the mask
itself, plus non-ASCII) in user-info raw or %-escaped, with the host in the
authority or in `?host=` / `?hostaddr=`, in a `password=` query parameter, or
in a key=value string. What is checked is everything a user sees when that
database cannot be reached: the start-up error, the storage boot line, and
any warning the driver logs meanwhile."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from mcp_memory.config import Settings
from mcp_memory.core.errors import StartupError
from mcp_memory.server.runners.boot import storage_line
from mcp_memory.stores.postgres.store import open_postgres

PIECE = 4
#: A socket directory where no server listens: libpq fails at once.
NO_SERVER = "/tmp/mcp-memory-no-server"

PASSWORDS = st.text(
    alphabet=st.characters(min_codepoint=33, max_codepoint=126, exclude_characters="*") | st.sampled_from("éß日"),
    min_size=PIECE,
    max_size=24,
)


OUR_WORDS = (
    "storage: postgres postgresql://app:***@/mem?host=/tmp — DATABASE_URL is set",
    "cannot connect to PostgreSQL at",
    "cannot open a connection pool to PostgreSQL at",
    "cannot set up mcp-memory's tables in PostgreSQL at",
)


def kv_quoted(password: str) -> str:
    return "'" + password.replace("\\", "\\\\").replace("'", "\\'") + "'"


SHAPES = {
    "userinfo, host in the authority": lambda p: f"postgresql://app:{p}@127.0.0.1:1/mem",
    "userinfo, ?host=": lambda p: f"postgresql://app:{p}@/mem?host={NO_SERVER}",
    "userinfo, ?hostaddr=": lambda p: f"postgresql://app:{p}@/mem?hostaddr=127.0.0.1&port=1",
    "userinfo %-escaped, ?host=": lambda p: f"postgresql://app:{quote(p, safe='')}@/mem?host={NO_SERVER}",
    "userinfo %-escaped": lambda p: f"postgres://app:{quote(p, safe='')}@127.0.0.1:1/mem?connect_timeout=2",
    "query parameter": lambda p: f"postgresql:///mem?host={NO_SERVER}&password={quote(p, safe='')}",
    "query parameter as typed": lambda p: f"postgresql://app@127.0.0.1:1/mem?password={p}",
    "key=value, quoted": lambda p: f"host={NO_SERVER} user=app password={kv_quoted(p)} dbname=mem",
    "key=value, as typed": lambda p: f"host=127.0.0.1 port=1 user=app password={p} dbname=mem",
}


def pieces(password: str) -> set[str]:
    return {password[i : i + PIECE].lower() for i in range(len(password) - PIECE + 1)}


def leaks(output: str, password: str) -> set[str]:
    low = output.lower()
    return {piece for piece in pieces(password) if piece in low}


class Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)  # what would reach stderr without the NullHandler
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def what_a_user_sees(url: str) -> list[str]:
    seen = [storage_line(Settings.from_env({"DATABASE_URL": url, "EMBEDDING_PROVIDER": "fake"}))]
    records = Records()
    driver = logging.getLogger("psycopg")  # the pool reports failed connections here
    driver.addHandler(records)
    try:
        with pytest.raises(StartupError) as refused:
            asyncio.run(open_postgres(url, model="fake", dim=8, timeout=2))
    finally:
        driver.removeHandler(records)
    return [*seen, str(refused.value), *records.lines]


@settings(
    max_examples=100, deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(shape=st.sampled_from(sorted(SHAPES)), password=PASSWORDS)
@example(shape="userinfo, ?host=", password="hunter2secret/x")  # the reported one
@example(shape="userinfo, ?hostaddr=", password="hunter2secret/x")
@example(shape="userinfo, ?host=", password="p@ss:w/rd?#")
@example(shape="key=value, as typed", password="s3cr3t'pass")
@example(shape="query parameter as typed", password="0%80")  # not UTF-8 once unescaped
def test_no_piece_of_a_password_reaches_an_error_a_boot_line_or_a_log(shape: str, password: str) -> None:
    if shape.endswith("as typed"):
        assume(not set(password) & set("&#' \\"))  # what a user could mean by typing it raw
    url = SHAPES[shape](password)
    # what any password would show: the rest of the URL, and our own words around it
    public = SHAPES[shape]("") + " ".join(OUR_WORDS)
    assume(not leaks(public, password))  # a piece that is also the host's or user's name is not a leak
    for line in what_a_user_sees(url):
        assert not leaks(line, password), (shape, line)


def test_the_reported_url_now_says_why_without_the_password(tmp_path: Path) -> None:
    [boot, error, *_] = what_a_user_sees("postgresql://app:hunter2secret/x@/mem?host=/tmp")
    assert boot == "storage: postgres postgresql://app:***@/mem?host=/tmp — DATABASE_URL is set"
    assert error == (
        "cannot connect to PostgreSQL at postgresql://app:***@/mem?host=/tmp: connection is bad: invalid "
        'integer value "***" for connection option "port"'
    )

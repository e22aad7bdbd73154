"""ULIDs, inverted time and ISO timestamps."""

from __future__ import annotations

import json
import math
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
from ulid import ULID

from mcp_memory.core.ids import inverted_time, iso, parse_iso, ulid, ulid_time

ULID_RE = re.compile(r"^[0-9A-HJKMNP-TV-Z]{26}$")


def epoch_ms(*args: int) -> int:
    return int(datetime(*args, tzinfo=UTC).timestamp()) * 1000


JAN_2020 = epoch_ms(2020, 1, 1)
JUL_2026 = epoch_ms(2026, 7, 1)
ORDERED_TIMES = [0, 1, 1000, JAN_2020, JUL_2026]


# --------------------------------------------------------------------------- ulid


@pytest.mark.parametrize("ms", ORDERED_TIMES + [2**48 - 1])
def test_a_ulid_is_26_crockford_base32_characters(ms: int) -> None:
    assert ULID_RE.fullmatch(ulid(ms))


def test_two_ulids_minted_in_the_same_millisecond_differ_in_their_random_part() -> None:
    first, second = ulid(JUL_2026), ulid(JUL_2026)
    assert first[:10] == second[:10]
    assert first != second


def test_given_random_bytes_make_a_ulid_reproducible() -> None:
    rnd = bytes(range(10))
    assert ulid(JUL_2026, rnd) == ulid(JUL_2026, rnd)
    # the 80 random bits 00 01 .. 09, five at a time in Crockford base32
    assert ulid(0, rnd) == "0000000000" + "000G40R40M30E209"


def test_too_few_random_bytes_are_refused() -> None:
    with pytest.raises(ValueError, match="a ULID needs 10 random bytes, got 9"):
        ulid(0, bytes(9))


# --------------------------------------------------------------------------- ids minted before python-ulid

FIXTURES = Path(__file__).parent / "fixtures" / "ids_minted_before_python_ulid.json"
BEFORE = json.loads(FIXTURES.read_text(encoding="utf-8"))["ids"]


def test_ids_minted_by_the_hand_written_encoder_parse_to_the_same_time() -> None:
    assert [ulid_time(row["id"]) for row in BEFORE] == [row["ms"] for row in BEFORE]


def test_ids_minted_by_the_hand_written_encoder_are_valid_ulids_that_sort_as_before() -> None:
    parsed = [ULID.from_str(row["id"]) for row in BEFORE]
    assert [str(u) for u in parsed] == [row["id"] for row in BEFORE]
    by_ulid = [str(u) for u in sorted(parsed)]
    assert by_ulid == sorted(row["id"] for row in BEFORE)
    assert [ulid_time(i) for i in by_ulid] == sorted(row["ms"] for row in BEFORE)


def test_the_inverted_time_key_is_unchanged_for_stored_ids() -> None:
    assert [inverted_time(row["ms"]) for row in BEFORE] == [row["inverted"] for row in BEFORE]


def test_a_new_id_sorts_after_every_stored_id_minted_earlier() -> None:
    latest = max(row["ms"] for row in BEFORE if row["ms"] < 2**48 - 1)
    fresh = ulid(latest + 1)
    assert all(fresh > row["id"] for row in BEFORE if row["ms"] <= latest)


@pytest.mark.parametrize("ms", ORDERED_TIMES + [2**48 - 1])
def test_the_time_of_a_ulid_round_trips(ms: int) -> None:
    assert ulid_time(ulid(ms)) == ms


def test_ulids_sort_as_text_in_the_order_of_their_times() -> None:
    ids = [ulid(ms) for ms in ORDERED_TIMES]
    assert sorted(ids) == ids
    assert len(set(ids)) == len(ids)


def test_fractional_milliseconds_are_floored() -> None:
    assert ulid_time(ulid(1000.9)) == 1000
    assert ulid_time(ulid(JUL_2026 + 0.5)) == JUL_2026


@pytest.mark.parametrize("value", [-1, 2**48, math.nan, math.inf, -math.inf], ids=["-1", "2^48", "nan", "inf", "-inf"])
def test_a_timestamp_outside_the_ulid_range_is_refused(value: float) -> None:
    with pytest.raises(ValueError, match="timestamp out of ULID range"):
        ulid(value)


def test_the_range_error_names_the_refused_value() -> None:
    with pytest.raises(ValueError, match=r"timestamp out of ULID range: -1$"):
        ulid(-1)


@pytest.mark.parametrize(
    "value",
    [
        "",
        "01J1KX2Y3Z",  # 10 chars: too short
        "01J1KX2Y3Z4W5V6T7S8R9Q0P1NX",  # 27 chars: too long
        "01j1kx2y3z4w5v6t7s8r9q0p1n",  # lowercase
        "01I1KX2Y3Z4W5V6T7S8R9Q0P1N",  # I is not in the alphabet
        "01L1KX2Y3Z4W5V6T7S8R9Q0P1N",  # L
        "01O1KX2Y3Z4W5V6T7S8R9Q0P1N",  # O
        "01U1KX2Y3Z4W5V6T7S8R9Q0P1N",  # U
    ],
)
def test_the_time_of_something_that_is_not_a_ulid_is_nan(value: str) -> None:
    assert math.isnan(ulid_time(value))


# --------------------------------------------------------------------------- inverted time


def test_inverted_time_sorts_newer_before_older() -> None:
    keys = [inverted_time(ms) for ms in ORDERED_TIMES]
    assert sorted(keys) == list(reversed(keys))
    assert inverted_time(JUL_2026) < inverted_time(JAN_2020)


@pytest.mark.parametrize("ms", [0, 1, JUL_2026, 2**48 - 1])
def test_inverted_time_is_always_ten_characters(ms: int) -> None:
    key = inverted_time(ms)
    assert len(key) == 10
    assert re.fullmatch(r"[0-9A-HJKMNP-TV-Z]{10}", key)


def test_inverted_time_spans_the_whole_range() -> None:
    assert inverted_time(0) == "7ZZZZZZZZZ"
    assert inverted_time(2**48 - 1) == "0000000000"


@pytest.mark.parametrize("value", [-1, 2**48, math.nan])
def test_inverted_time_refuses_what_a_ulid_refuses(value: float) -> None:
    with pytest.raises(ValueError, match="timestamp out of ULID range"):
        inverted_time(value)


# --------------------------------------------------------------------------- ISO timestamps


def test_iso_writes_utc_with_milliseconds_and_z() -> None:
    assert iso(JUL_2026) == "2026-07-01T00:00:00.000Z"
    assert iso(JUL_2026 + 1) == "2026-07-01T00:00:00.001Z"
    assert iso(0) == "1970-01-01T00:00:00.000Z"


def test_iso_floors_fractional_milliseconds() -> None:
    assert iso(JUL_2026 + 123.9) == "2026-07-01T00:00:00.123Z"


def test_parse_iso_reads_a_z_timestamp() -> None:
    assert parse_iso("2026-07-01T00:00:00.000Z") == JUL_2026
    assert parse_iso("2026-07-01T00:00:00.123Z") == JUL_2026 + 123


def test_parse_iso_honours_a_numeric_offset() -> None:
    assert parse_iso("2026-07-01T09:00:00.000+09:00") == JUL_2026
    assert parse_iso("2026-06-30T19:00:00-05:00") == JUL_2026


def test_parse_iso_reads_every_millisecond_iso_wrote_back_exactly() -> None:
    # Float seconds × 1000 can land just below the whole millisecond and floor one too low
    # (e.g. 2004-03-15T07:55:47.472Z read back as …471): check known cases and a spread.
    for ms in range(JUL_2026, JUL_2026 + 2000, 7):
        assert parse_iso(iso(ms)) == ms, iso(ms)
    for ms in (1_079_337_347_472, 2_165_497_250_430, 1_723_456_789_013, 946_684_800_001):
        assert parse_iso(iso(ms)) == ms, iso(ms)


@pytest.mark.parametrize("text", ["not-a-date", "", "   ", "2026-13-01T00:00:00Z", None, 12345])
def test_parse_iso_answers_nan_and_never_raises_for_something_unreadable(text: object) -> None:
    assert math.isnan(parse_iso(text))  # type: ignore[arg-type]

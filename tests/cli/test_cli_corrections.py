"""The CLI's --replaces: a correction removes what it names; a bad or invisible id exits 2
or 1 with the id named, and writes nothing."""

from __future__ import annotations

import json

from tests.cli.test_cli import cli  # noqa: F401 (the fixture)

OLD = "The payments webhook retries failed deliveries three times with jitter"
NEW = "The payments webhook retries failed deliveries five times with backoff"


def test_remember_replaces_the_memories_named_by_repeated_replaces(cli) -> None:  # noqa: F811
    first = json.loads(cli("remember", "-t", "acme", OLD, "--json").stdout)["memory"]["id"]
    second = json.loads(cli("remember", "-t", "acme", "Invoices are archived after ninety days", "--json").stdout)[
        "memory"
    ]["id"]
    result = cli("remember", "-t", "acme", NEW, "--replaces", first, "--replaces", second, "--json")
    assert result.returncode == 0, result.stderr
    record = json.loads(result.stdout)
    assert record["created"] and record["replaced"] == [first, second]
    listed = json.loads(cli("list", "-t", "acme", "--json").stdout)["memories"]
    assert [m["id"] for m in listed] == [record["memory"]["id"]]


def test_a_changed_fact_is_stored_with_a_hint_naming_the_old_one(cli) -> None:  # noqa: F811
    first = json.loads(cli("remember", "-t", "acme", OLD, "--json").stdout)["memory"]["id"]
    result = cli("remember", "-t", "acme", OLD.replace("three", "four"))
    assert result.returncode == 0
    assert "Close to an existing memory" in result.stdout and f"--replaces {first}" in result.stdout


def test_a_malformed_or_unknown_replaces_id_is_refused_and_nothing_is_written(cli) -> None:  # noqa: F811
    bad = cli("remember", "-t", "acme", NEW, "--replaces", "nope")
    assert bad.returncode == 2 and '--replaces: "nope" is not a memory id' in bad.stderr
    unknown = cli("remember", "-t", "acme", NEW, "--replaces", "01ARZ3NDEKTSV4RRFFQ69G5FAV")
    assert unknown.returncode != 0 and "01ARZ3NDEKTSV4RRFFQ69G5FAV" in unknown.stderr
    assert json.loads(cli("list", "-t", "acme", "--json").stdout)["memories"] == []


def test_recall_and_list_take_type_and_tag_filters(cli) -> None:  # noqa: F811
    cli("remember", "-t", "acme", "Rolling deploys drain streams first", "--tag", "deploy", "--type", "pattern")
    cli("remember", "-t", "acme", "Rolling restarts of the cache tier are manual", "--tag", "cache")
    recalled = json.loads(cli("recall", "-t", "acme", "rolling deploys", "--tag", "cache", "--json").stdout)
    assert [r["content"] for r in recalled["results"]] == ["Rolling restarts of the cache tier are manual"]
    typed = json.loads(cli("recall", "-t", "acme", "rolling deploys", "--type", "pattern", "--json").stdout)
    assert [r["content"] for r in typed["results"]] == ["Rolling deploys drain streams first"]
    listed = json.loads(cli("list", "-t", "acme", "--tag", "deploy", "--tag", "nothing", "--json").stdout)
    assert [m["content"] for m in listed["memories"]] == ["Rolling deploys drain streams first"]
    bad = cli("recall", "-t", "acme", "x", "--type", "note")
    # --type is a choice: the CLI refuses a value outside it before the service is opened
    assert bad.returncode == 2 and "Invalid value for '--type'" in bad.stderr and "'note' is not one of" in bad.stderr


def test_recall_and_list_take_since_and_until_as_dates_instants_or_ages(cli) -> None:  # noqa: F811
    cli("remember", "-t", "acme", "Rolling deploys drain streams first")
    for since in ("7d", "2w", "12h", "2000-01-01", "2000-01-01T00:00:00Z"):
        recalled = json.loads(cli("recall", "-t", "acme", "rolling deploys", "--since", since, "--json").stdout)
        assert [r["content"] for r in recalled["results"]] == ["Rolling deploys drain streams first"], since
    older = json.loads(cli("recall", "-t", "acme", "rolling deploys", "--until", "2000-01-01", "--json").stdout)
    assert older["results"] == []
    listed = json.loads(cli("list", "-t", "acme", "--since", "1d", "--until", "2999-12-31", "--json").stdout)
    assert [m["content"] for m in listed["memories"]] == ["Rolling deploys drain streams first"]
    none = json.loads(cli("list", "-t", "acme", "--until", "1w", "--json").stdout)
    assert none["memories"] == []


def test_a_bad_since_or_until_exits_2_naming_the_flag(cli) -> None:  # noqa: F811
    bad = cli("recall", "-t", "acme", "x", "--since", "last week")
    assert bad.returncode == 2 and "--since must be an ISO 8601 date (2026-05-01) or time" in bad.stderr
    order = cli("list", "-t", "acme", "--since", "1d", "--until", "2d")
    assert order.returncode == 2 and "--since (" in order.stderr and "is later than the span's end" in order.stderr


def test_recall_shows_a_correction_first_and_the_older_one_as_possibly_superseded_with_times(cli) -> None:  # noqa: F811
    old = json.loads(cli("remember", "-t", "acme", OLD, "--json").stdout)["memory"]["id"]
    new = json.loads(cli("remember", "-t", "acme", NEW, "--json").stdout)["memory"]["id"]
    shown = cli(
        "recall", "-t", "acme", "how does the payments webhook retry failed deliveries", "--mode", "exploratory"
    )
    assert shown.returncode == 0, shown.stderr
    text = " ".join(shown.stdout.split())
    assert text.index(new) < text.index(old)
    assert f"possibly superseded by the newer {new}" in text
    assert " UTC" in text  # the two share a date: the time of day is shown

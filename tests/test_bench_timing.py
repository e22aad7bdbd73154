"""The one percentile every benchmark reports with (bench/harness/timing.py): linear between the
nearest ranks, so p50 is the median and a p95 is not simply the largest of a few samples."""

from __future__ import annotations

import statistics

import pytest

from bench.harness.timing import Stopwatch, percentile, summary


def test_p50_is_the_median_for_odd_and_even_counts():
    for values in ([3.0, 1.0, 2.0], [4.0, 1.0, 3.0, 2.0], [5.0] * 7):
        assert percentile(values, 50) == statistics.median(values)


def test_a_percentile_interpolates_between_the_two_nearest_ranks():
    values = [float(v) for v in range(1, 21)]  # 1..20
    assert percentile(values, 95) == pytest.approx(19.05)
    assert percentile(values, 0) == 1.0
    assert percentile(values, 100) == 20.0
    assert percentile(values, 95) == pytest.approx(statistics.quantiles(values, n=20, method="inclusive")[-1])


def test_a_percentile_of_nothing_or_out_of_range_is_refused_by_name():
    with pytest.raises(ValueError, match="no values"):
        percentile([], 50)
    with pytest.raises(ValueError, match="q must be within 0..100, got 101"):
        percentile([1.0], 101)


def test_the_summary_gives_milliseconds_and_the_stopwatch_keeps_each_block():
    got = summary([0.001, 0.002, 0.003])
    assert got["n"] == 3
    assert got["p50_ms"] == pytest.approx(2.0)
    assert got["min_ms"] == pytest.approx(1.0) and got["max_ms"] == pytest.approx(3.0)
    assert summary([]) == {"n": 0}
    watch = Stopwatch()
    for _ in range(3):
        with watch:
            pass
    assert len(watch.seconds) == 3 and all(s >= 0 for s in watch.seconds)


def test_a_single_timed_block_reads_as_the_stopwatchs_last_and_in_ms():
    with Stopwatch() as fill:
        inside = fill.running()
    assert inside >= 0 and fill.last >= inside
    assert fill.seconds == [fill.last] and fill.ms() == [fill.last * 1000]


def test_a_started_stopwatch_counts_from_its_start():
    clock = Stopwatch.started()
    first = clock.running()
    assert 0 <= first <= clock.running() and clock.seconds == []

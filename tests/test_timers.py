"""How each measurement was timed: the speedup table's ``timer`` column."""

import pytest

from roofline_sym import fidelity
from roofline_sym.devices import timers
from roofline_sym.fidelity.published_tables.speedup_table import read


def test_the_timer_column_is_read_and_blank_means_not_stated():
    row = {"gpu": "h100", "recipe": "rowwise", "mode": "inference", "workload": "gemm",
           "M": 16, "K": 5376, "N": 12288}
    t = read([row, {**row, "timer": " graph "}, {**row, "timer": "events"},
              {**row, "timer": "profiler"}, {**row, "timer": None}])
    assert t.timer.tolist() == ["", "graph", "events", "profiler", ""]
    # a record only: the prediction does not depend on it
    p = fidelity.predict_speedups(t)
    assert len(set(p.tolist())) == 1


def test_a_timer_cell_is_text():
    # a typo in a file is refused with the row (tests/test_published.py)
    with pytest.raises(ValueError, match="timer"):
        timers.check_timer(3)


def test_published_timers_are_stated_where_the_sources_say():
    t = fidelity.published()
    by_source: dict[str, set[str]] = {}
    for s, timer in zip(t.source_id, t.timer):
        by_source.setdefault(str(s), set()).add(str(timer))
    # one timer per source: a table is timed one way
    assert all(len(v) == 1 for v in by_source.values())
    # vLLM's kernel benchmarks replay CUDA graphs (triton do_bench_cudagraph)
    for s in ("vllm-pr23280-h100", "vllm-pr19566-b200", "vllm-pr18778-b200",
              "vllm-pr49363-h100"):
        assert by_source[s] == {"graph"}
    # torchao's layer tables sum profiler kernel times; FBGEMM's no-graph runs use events
    assert by_source["ao-rowwise-h100-png"] == {"profiler"}
    assert by_source["fbgemm-pr3610-h100"] == {"events"}
    assert {"graph", "events", "profiler", ""} == set().union(*by_source.values())

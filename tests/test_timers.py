"""How each measurement was timed: the speedup table's ``timer`` column."""

import pytest
import sympy

import roofline_sym as rs
from roofline_sym import fidelity
from roofline_sym import symbols as S
from roofline_sym.devices import Hardware
from roofline_sym.model.presets import options
from roofline_sym.model.term import Work, roofline_pieces
from roofline_sym.devices import timers
from roofline_sym.fidelity.published_tables.speedup_table import read


def test_the_timer_column_is_read_and_blank_means_not_stated():
    # a tiny GEMM: its kernels take less than the host's time per launch
    row = {"gpu": "h100", "recipe": "rowwise", "mode": "inference", "workload": "gemm",
           "M": 16, "K": 128, "N": 128}
    t = read([row, {**row, "timer": " graph "}, {**row, "timer": "events"},
              {**row, "timer": "profiler"}, {**row, "timer": None}])
    assert t.timer.tolist() == ["", "graph", "events", "profiler", ""]
    # blank takes the default model's timer (graph); a graph replay and a profiler's
    # sum of kernel times price alike; events see the host's time per launch, which
    # no shipped entry states yet: the launch floor, so all five agree
    p = fidelity.predict_speedups(t).tolist()
    assert len(set(p)) == 1
    h100 = rs.hardware("h100")
    assert h100.host_launch is None
    events = rs.linear("rowwise", mode="inference", workload="gemm", timer="events")
    slow_host = h100.replace(host_launch=2e-5)
    assert float(events.on(h100).evaluate(16, 128, 128)["speedup"]) == pytest.approx(p[2])
    # a host that takes 20 us per launch: every kernel of this tiny GEMM waits for it
    # (2 bf16-side kernels against the rowwise side's quantize kernels and GEMM)
    assert float(events.on(slow_host).evaluate(16, 128, 128)["speedup"]) != pytest.approx(p[2])


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


def test_events_floor_every_kernel_at_the_hosts_time_per_launch():
    w = Work(2 * S.M * S.K * S.N, "fp8", S.M * S.K)
    assert roofline_pieces(w)[-1] == ("launch", S.launch_overhead())
    assert roofline_pieces(w, timer="profiler")[-1] == ("launch", S.launch_overhead())
    assert roofline_pieces(w, timer="events")[-1] == ("launch", S.host_launch())
    assert options().timer == "graph"
    with pytest.raises(ValueError, match="timer"):
        rs.linear("tensorwise", timer="cudagraph")


def test_a_tiny_gemm_under_events_costs_the_hosts_time_on_both_sides():
    # by hand: at 16^3 a GEMM is its fixed time, 3 us bf16 and 4 us fp8 (graph: 3/4);
    # a host that takes 10 us per launch floors both sides at 10 us (events: 1)
    hw = Hardware("Toy", peak_flops={"bf16": 1e15, "fp8": 2e15}, mem_bw=2e12,
                  gemm_efficiency={"bf16": 0.8, "fp8": 0.8}, mem_efficiency=0.9,
                  launch_overhead=2e-6, host_launch=1e-5,
                  gemm_fixed_s={"bf16": 3e-6, "fp8_tensorwise": 4e-6})
    graph = rs.linear("tensorwise", mode="inference", workload="gemm").on(hw)
    events = rs.linear("tensorwise", mode="inference", workload="gemm", timer="events").on(hw)
    assert float(graph.evaluate(16, 16, 16)["speedup"]) == pytest.approx(0.75, rel=1e-3)
    assert float(events.evaluate(16, 16, 16)["speedup"]) == pytest.approx(1.0, rel=1e-3)
    # at large shapes the host hides behind the GPU: the timers agree
    big = 16384
    assert float(events.evaluate(big, big, big)["speedup"]) == pytest.approx(
        float(graph.evaluate(big, big, big)["speedup"]), rel=1e-9)


def test_the_hosts_time_defaults_to_the_launch_floor_and_is_read_from_toml():
    hw = Hardware("Toy", peak_flops={"bf16": 1e15}, mem_bw=2e12, launch_overhead=2e-6)
    assert hw.parameters[S.host_launch()] == sympy.Rational(1, 500000)
    toml = hw.replace(host_launch=1e-5)
    assert toml.parameters[S.host_launch()] == sympy.Rational(1, 100000)
    from roofline_sym.devices.toml_io import TOML_FIELDS
    assert TOML_FIELDS["host_launch_s"] == "host_launch"

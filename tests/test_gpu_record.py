"""A GPU is one record in one file: added from its datasheet, it serves a
model, a fit and the command line with no other edit."""

import pytest
import sympy

import roofline_sym as rs
from roofline_sym.cli import main
from roofline_sym.devices import implementations as impls
from roofline_sym.devices.calibration import Carried, Fitted
from roofline_sym.devices.catalog import _shipped
from roofline_sym.devices.toml_io import edit_entries
from roofline_sym.errors import RooflineError

# A made-up Hopper part as its datasheet gives it: H100 SXM's peaks at another
# bandwidth, fitted to its own rows; the whole addition to the data file
NEW_GPU = '''
[[gpu]]
name = "Example X100"
aliases = ["x100"]
generation = "hopper"
peak_flops_per_s = { bf16 = 989.4e12, fp8 = 1978.9e12 }
block_scaling = []
gemm_efficiency = { bf16 = 0.8, fp8 = 0.7 }
best_shape_efficiency = { bf16 = 0.8, fp8 = 0.7 }
mem_bw_bytes_per_s = 4e12
mem_efficiency = 0.9
launch_overhead_s = 2e-6
link_bw_bytes_per_s = { scale_up = 450e9, scale_out = 50e9 }
link_efficiency = { scale_up = 0.8, scale_out = 0.85 }
scale_up_gpus = 8

[gpu.sources]
block_scaling = "assumed; Hopper tensor cores, per-tensor scales only"
peak_flops_per_s = "assumed; the datasheet's dense rates"
gemm_efficiency = "assumed; as its best shape"
best_shape_efficiency = "assumed; a shape search on the part"
mem_bw_bytes_per_s = "assumed; the datasheet"
mem_efficiency = "assumed; STREAM triad on the part"
launch_overhead_s = "assumed; one-element kernel"
link_bw_bytes_per_s = "assumed; the datasheet: NVLink 4, a 400 Gb/s NIC per GPU"
link_efficiency = "assumed; as H100 SXM's"
scale_up_gpus = "assumed; an eight-GPU board"

[gpu.calibration]
fitted_to = ["x100"]
workloads = ["gemm"]
free = ["eta_fp8"]

[gpu.calibration.priors]
t0_bf16 = { value = 4e-6, source = "assumed; the launch floor and a prologue" }
'''


@pytest.fixture
def data(tmp_path):
    """A copy of the shipped data with the new GPU added: one edit of one file."""
    path = tmp_path / "default.toml"
    path.write_text(_shipped("default") + NEW_GPU, encoding="utf-8")
    return path


def test_a_new_gpu_is_one_record(data):
    ds = rs.load_hardware(data)
    x100 = ds.get("x100")
    assert isinstance(x100.calibration, Fitted) and x100.calibration.free == ("eta_fp8",)
    assert isinstance(ds.get("h200").calibration, Carried)
    # its generation is what picks the implementation profiles: Hopper's CUTLASS ones
    assert impls.generation(x100) == "hopper"
    assert impls.profile("cutlass", x100, "rowwise") == impls.profile("cutlass", "h100",
                                                                      "rowwise")
    # in a model: a compute-bound GEMM's time is FLOPs / (peak x fraction); 2 M K N
    # FLOPs at M = K = N = 16384 over 989.4e12 x 0.8 FLOP/s = 11.11 ms, fixed times
    # (about 4 us) below the printed digits
    t = rs.linear("rowwise", mode="inference", workload="gemm").on(x100).evaluate(
        16384, 16384, 16384, outputs=("baseline_time",))["baseline_time"]
    assert float(t) == pytest.approx(2 * 16384 ** 3 / (989.4e12 * 0.8), rel=1e-3)


def test_a_new_gpu_in_a_step_talks_over_its_links(data):
    x100 = rs.load_hardware(data).get("x100")
    assert x100.has_links and x100.sources["scale_up_gpus"] == "assumed; an eight-GPU board"
    step = rs.step("llama3-8b", "tensorwise", gpus=8).on(x100)
    # FSDP's all-gather of bf16 weights on 8 GPUs: 7/8 of 2 x 8,030,261,248 bytes
    # arrive over NVLink at 450e9 x 0.8 B/s = 39.04 ms
    seconds = sympy.Rational(7, 8) * 2 * 8_030_261_248 / (450 * 10 ** 9 * sympy.Rational(4, 5))
    assert float(seconds) == pytest.approx(0.03904, rel=1e-3)
    assert step.breakdown["baseline.comm.fsdp.all_gather"].has(seconds)
    # without them a step on one GPU still prices; over eight it names the fields
    bare = x100.replace(link_bw={}, link_efficiency={}, scale_up_gpus=None)
    assert rs.step("llama3-8b", "tensorwise").on(bare).hardware.name == "Example X100"
    with pytest.raises(RooflineError, match="link_bw_bytes_per_s, link_efficiency and "
                                            "scale_up_gpus"):
        rs.step("llama3-8b", "tensorwise", gpus=8).on(bare)


def test_a_new_gpu_is_fitted_and_written_back(data):
    from roofline_sym.fidelity.published_tables import gpu_fits
    from roofline_sym.fidelity.published_tables.joint_fit import predict_rows
    from roofline_sym.fidelity.published_tables.speedup_table import read

    x100 = rs.load_hardware(data).get("Example X100")
    spec = gpu_fits.spec_of(x100)
    assert spec.priors["eta_fp8"][0] == 0.7 and spec.priors["t0_bf16"][0] == 4e-6
    # rows "measured" on a part whose fp8 GEMMs reach 0.55 of peak: the fit
    # must find 0.55 (the oracle is the model at that number)
    rows = [{"source_id": "bench", "gpu": "x100", "recipe": "tensorwise",
             "mode": "inference", "workload": "gemm", "M": m, "K": 8192, "N": 8192}
            for m in (1024, 4096, 16384)]
    truth = gpu_fits.prior_entry(spec, x100).with_values({"eta_fp8": 0.55})
    values = {str(k): float(v) for k, v in truth.parameters.items()}
    measured = predict_rows(read(rows), values, truth, shipped=False)
    table = read([{**r, "measured_speedup": float(s)} for r, s in zip(rows, measured)])
    fitted = gpu_fits.fit_gpu(spec, table, base=x100, kernels=_no_kernels())
    assert fitted.values == {"eta_fp8": 0.55}
    # written back through the hardware file's writer, every other entry as it was
    fields = gpu_fits.dataset_fields({x100.name: fitted}, str(data))
    assert list(fields) == ["Example X100"]
    data.write_text(edit_entries(data.read_text("utf-8"), fields, str(data)), "utf-8")
    back = rs.load_hardware(data)
    assert back.get("x100").gemm_efficiency["fp8"] == sympy.Rational(55, 100)
    assert "fitted jointly to 3 measured speedups" in back.get("x100").sources["gemm_efficiency"]
    assert [h for h in back.entries if h.name != x100.name] == list(rs.devices.dataset().entries)


def _no_kernels():
    from roofline_sym.fidelity.published_tables.gemm_kernels import gemm_rows

    k = gemm_rows()
    return k.select(k.gpu == "x100")


def test_a_new_gpu_on_the_command_line(data, capsys):
    assert main(["hardware", "--hardware-file", str(data), "x100"]) == 0
    assert "4 TB/s" in capsys.readouterr().out
    code = main(["eval", "--hardware-file", str(data), "--gpu", "x100", "--recipe",
                 "rowwise", "--shape", "16384,16384,16384", "--json"])
    out = capsys.readouterr().out
    assert code == 0 and "Example X100" in out


def test_a_carried_gpu_names_a_fitted_one(tmp_path):
    text = _shipped("default").replace(
        'calibration = { carried_from = "H100 SXM", low_precision = "ratio" }',
        'calibration = { carried_from = "H200 SXM", low_precision = "ratio" }', 1)
    path = tmp_path / "bad.toml"
    path.write_text(text, "utf-8")
    with pytest.raises(rs.devices.HardwareError, match="carried_from 'H200 SXM' is no "
                                                        "fitted entry"):
        rs.load_hardware(path)


def test_the_shipped_records_say_what_the_fit_reads():
    from roofline_sym.fidelity.published_tables import gpu_fits

    assert list(gpu_fits.SPECS) == ["H100 SXM", "B200 (HGX)", "RTX 5090"]
    assert gpu_fits.TRANSFERS["H100 96GB HBM2e"] == ("H100 SXM", False)
    assert "ao-infer-b200-r1" in gpu_fits.SUPERSEDED
    # the prediction bands' quick answer, from the catalog's dataset, names the same GPUs
    assert gpu_fits.fitted_gpus() == set(gpu_fits.SPECS)
    # every shipped GPU has a generation, a best-shape fraction and a calibration
    for hw in rs.devices.dataset().entries:
        assert hw.generation and hw.best_shape_efficiency["bf16"] > 0 and hw.calibration

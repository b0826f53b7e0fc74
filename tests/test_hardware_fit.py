"""Calibration: recovering known parameters from synthetic measurements, the
size-dependent extension, clipping, and the hardware file it writes."""

import math
from importlib import resources

import numpy as np
import pytest

import roofline_sym as rs
from roofline_sym.fidelity.own_gpu import components, timing as ms
from roofline_sym.fidelity.own_gpu import measurement_file as mfile
from roofline_sym.fidelity.own_gpu.hardware_fit import (Calibration, _Problem, fit_hardware, hardware_values,
                                                        synthesize)
from roofline_sym.devices import HardwareError

TRUTH = {"eta_bf16": 0.78, "eta_fp8": 0.66, "eta_mem": 0.85, "t_launch": 3.0e-6}
# a fixed time per GEMM by GEMM class, seconds: the two fp8 classes differ, so
# one t0 per dtype could not fit them both
T0 = {"bf16": 5e-6, "fp8_tensorwise": 4e-6, "fp8_rowwise": 6e-6}


@pytest.fixture(scope="module")
def default_grid():
    return ms.grid("default")


def _rel(cal, truth):
    return {k: cal.values[k] / v - 1 for k, v in truth.items()}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_recovers_known_parameters_from_noisy_measurements(default_grid, seed):
    meas = synthesize("h200", default_grid, TRUTH, noise=0.02, seed=seed)
    cal = fit_hardware(meas, "h200")
    errors = _rel(cal, TRUTH)
    assert all(abs(e) < 0.03 for e in errors.values()), errors
    assert cal.rms_log_error == pytest.approx(0.02, abs=0.005)  # the noise, nothing more


def test_noise_free_measurements_are_recovered_to_the_rounding(default_grid):
    cal = fit_hardware(synthesize("h100", default_grid, TRUTH, noise=0.0), "h100")
    assert all(abs(e) < 5e-4 for e in _rel(cal, TRUTH).values())
    assert cal.rms_log_error < 1e-3


@pytest.mark.parametrize("seed", [0, 1])
def test_size_dependent_efficiency_is_recovered(default_grid, seed):
    meas = synthesize("h200", default_grid, TRUTH, fixed_s=T0, noise=0.02, seed=seed)
    cal = fit_hardware(meas, "h200", size_dependent=True)
    assert all(abs(e) < 0.03 for e in _rel(cal, TRUTH).values()), cal.values
    assert set(cal.fixed_s) == set(T0)
    for cls, t0 in T0.items():
        assert cal.fixed_s[cls] == pytest.approx(t0, rel=0.10)
        assert float(cal.hardware.gemm_fixed_s[cls]) == cal.fixed_s[cls]
    assert cal.size_dependent and cal.rms_log_error < 0.025
    # the plain fit cannot follow small GEMMs: its error is many times the noise
    assert fit_hardware(meas, "h200").rms_log_error > 5 * cal.rms_log_error


def test_size_dependent_fit_of_size_independent_data_finds_no_size_dependence(default_grid):
    cal = fit_hardware(synthesize("h200", default_grid, TRUTH, noise=0.02, seed=3), "h200",
              size_dependent=True)
    assert all(abs(e) < 0.03 for e in _rel(cal, TRUTH).values())
    for t0 in cal.fixed_s.values():  # well under a microsecond per GEMM
        assert t0 < 0.3e-6


def test_size_dependent_efficiency_maps_onto_the_linear_model():
    cal = Calibration.of(rs.hardware("h200"))
    fixed = {"bf16": 5e-6, "fp8_tensorwise": 4e-6, "fp8_rowwise": 6e-6}
    # the flat component model plus fixed times: no per-class kernel efficiencies
    hw = cal.hardware.replace(gemm_fixed_s=fixed, kernel_efficiency={},
                              kernel_fixed_s={k: 0 for k in rs.symbols.KERNEL_KINDS},
                              scaling_efficiency={})
    cal = Calibration(hw, cal.base, cal.values, fixed)
    M, K, N = np.array([[512.0, 1024, 8192], [512, 4096, 8192], [512, 1024, 28672]])
    lowp = [f"gemm.fp8_tensorwise.{g}" for g in components.GEMM_NAMES] + [
        c for c in components.COMPONENTS if c.startswith("cast.tensorwise.")]
    base = [f"gemm.bf16.{g}" for g in components.GEMM_NAMES]

    def total(comps):
        out = 0
        for c in comps:
            _, f, b = components.costs([c] * 3, M, K, N)
            classes = [components.gemm_class_of(c)] * 3
            out = out + components.model_times(*cal.costs(classes, f, b), cal.parameters())
        return out

    got = cal.evaluate(rs.linear("tensorwise"), M, K, N)["speedup"]
    np.testing.assert_allclose(got, total(base) / total(lowp), rtol=1e-12)
    # a compute-bound GEMM's time is the constant-eta time plus t0, by hand
    f = 2 * 512.0**3
    eta = float(rs.hardware("h200").gemm_efficiency["bf16"])
    d, f_eff, b_eff = cal.costs(["bf16"], [f], [1.0])
    assert f_eff[0] / (989.4e12 * eta) == pytest.approx(f / (989.4e12 * eta) + 5e-6)
    # each fp8 class its own fixed time, at fp8's one rate
    d, f_eff, _ = cal.costs(["fp8_tensorwise", "fp8_rowwise"], [f, f], [1.0, 1.0])
    rate = float(hw.peak_flops["fp8"]) * float(hw.gemm_efficiency["fp8"])
    assert d.tolist() == ["fp8", "fp8"]
    assert ((f_eff - f) / rate).tolist() == pytest.approx([4e-6, 6e-6])
    with pytest.raises(ValueError, match="unbound model"):
        cal.evaluate(rs.linear("tensorwise").on("h200"), 1, 1, 1)


def test_the_fit_jacobian_is_the_derivative_of_its_residuals():
    # an independent oracle: central differences of the residuals, with a fixed
    # time per GEMM class (two fp8 classes at one rate eta_fp8)
    meas = synthesize("h200", ms.grid("quick"), TRUTH, fixed_s=T0, noise=0.0)
    dtype, flops, nbytes = meas.costs
    names = ["eta_bf16", "eta_fp8", "eta_mem", "t_launch", *(f"t0_{c}" for c in T0)]
    hw = rs.hardware("h200")
    problem = _Problem(dtype, meas.gemm_classes, flops, nbytes, meas.time_s,
                       {d: float(hw.peak_flops[d]) for d in ("bf16", "fp8")}, float(hw.mem_bw),
                       names)
    x = np.log([0.7, 0.6, 0.8, 2.5e-6, 3e-6, 4.5e-6, 7e-6])
    _, J, active = problem(x)
    h = 1e-6
    for i, name in enumerate(names):
        step = np.eye(len(x))[i] * h
        (up, _, a_up), (down, _, a_down) = problem(x + step), problem(x - step)
        same = (a_up == active) & (a_down == active)  # rows that keep their piece
        assert same.mean() > 0.95
        np.testing.assert_allclose(J[same, i], (up - down)[same] / (2 * h), atol=1e-6,
                                   err_msg=name)
    assert np.abs(J[:, names.index("t0_fp8_rowwise")]).max() > 0.1  # the class is in play


def test_synthetic_fixed_times_are_per_gemm_class():
    grid = ms.grid("quick")
    plain = synthesize("h200", grid, TRUTH, noise=0.0)
    rowwise = synthesize("h200", grid, TRUTH, fixed_s={"fp8_rowwise": 6e-6}, noise=0.0)
    changed = {c.component.split(".")[1] for c, a, b in zip(plain.cases, plain.time_s,
                                                             rowwise.time_s) if a != b}
    assert changed == {"fp8_rowwise"}
    with pytest.raises(ValueError, match=r"fixed_s: unknown GEMM class 'fp8'.* valid: "
                                         r"bf16, fp8_tensorwise, fp8_rowwise"):
        synthesize("h200", grid, fixed_s={"fp8": 5e-6})


def test_efficiency_above_one_is_clipped_with_a_warning(tmp_path):
    # a bf16 peak written 2x too low makes the fitted fraction 1.56
    true_hw = rs.hardware("h200")
    low_peak = true_hw.replace(peak_flops={**true_hw.peak_flops,
                                           "bf16": true_hw.peak_flops["bf16"] / 2})
    meas = synthesize(true_hw, ms.grid("quick"), TRUTH, noise=0.0)
    with pytest.warns(UserWarning, match=r"eta_bf16 fitted to 1\.56.*clipped to 1"):
        cal = fit_hardware(meas, low_peak)
    assert cal.values["eta_bf16"] == 1.0
    assert cal.values["eta_fp8"] == pytest.approx(0.66, rel=1e-3)
    assert any("clipped to 1" in n for n in cal.hardware.notes)
    loaded = rs.load_hardware(cal.to_toml(tmp_path / "clipped.toml")).entries[0]
    assert loaded.gemm_efficiency["bf16"] == 1


def test_memory_efficiency_above_one_warns_about_bandwidth():
    true_hw = rs.hardware("h200")
    low_bw = true_hw.replace(mem_bw=true_hw.mem_bw / 2)
    meas = synthesize(true_hw, ms.grid("quick"), TRUTH, noise=0.0)
    with pytest.warns(UserWarning, match=r"eta_mem fitted to 1\.7.* > 1 \(faster than "
                                         r"H200 SXM's bandwidth allows\): clipped to 1"):
        cal = fit_hardware(meas, low_bw)
    assert cal.values["eta_mem"] == 1.0
    assert not any("peak allows" in n for n in cal.notes if n.startswith("eta_mem"))


def test_calibrated_hardware_file_loads_in_the_shipped_schema(tmp_path):
    meas = synthesize("h200", ms.grid("quick"), TRUTH, noise=0.01, seed=4)
    csv_path = tmp_path / "h200-run.csv"
    meas.write(csv_path)
    cal = fit_hardware(csv_path, "h200")
    text = cal.toml()
    for table in ("[dataset]", "[sources]", "[[gpu]]", "[gpu.sources]"):
        assert table in text
    assert "# SYNTHETIC measurements" in text
    ds = rs.load_hardware(cal.to_toml(tmp_path / "h200-calibrated.toml"))
    (hw,) = ds.entries
    assert hw.name == "H200 SXM (calibrated)" and ds.name == "calibrated"
    base = rs.hardware("h200")
    for k, v in cal.values.items():
        assert float(hw.parameters[rs.symbols.hardware_symbol(k)]) == v
    # datasheet numbers are kept, with the base entry's citation
    assert hw.peak_flops == base.peak_flops and hw.mem_bw == base.mem_bw
    assert hw.l2_bytes == base.l2_bytes and hw.memory_bytes == base.memory_bytes
    assert "h200-run.csv" in hw.sources["mem_efficiency"]
    assert "sha256" in hw.sources["launch_overhead"]
    assert "SYNTHETIC" in hw.sources["gemm_efficiency"]
    assert base.sources["mem_bw"] in hw.sources["mem_bw"]
    assert any("SYNTHETIC" in n for n in hw.notes)
    # usable like any entry
    out = rs.linear("rowwise").on(hw).evaluate(8192, 8192, 8192)
    assert math.isfinite(float(out["speedup"]))


def test_a_calibrated_file_read_back_writes_the_same_entry(tmp_path):
    meas = synthesize("h200", ms.grid("quick"), TRUTH, noise=0.01, seed=4)
    csv_path = tmp_path / "h200-run.csv"
    meas.write(csv_path)
    first = fit_hardware(csv_path, "h200").to_toml(tmp_path / "a.toml")
    back = Calibration.load(first, rs.hardware("h200"))
    assert back.source == str(first) and set(back.meas_sources) == {"MEAS", "BASE"}
    assert "h200-run.csv" in back.meas_sources["MEAS"]
    again = back.to_toml(tmp_path / "b.toml")
    a, b = (rs.load_hardware(p) for p in (first, again))
    assert a.entries[0] == b.entries[0]
    assert dict(a.entries[0].sources) == dict(b.entries[0].sources)
    text = again.read_text()
    assert "# Written back from a.toml." in text and "Fitted to measurement file" not in text
    assert back.toml().split("[sources]")[1] == first.read_text().split("[sources]")[1]
    with pytest.raises(ValueError, match="torchao.toml: expected one calibrated entry, found 6"):
        Calibration.load(_copy_of_a_dataset(tmp_path, "torchao"))


def _copy_of_a_dataset(tmp_path, name):
    p = tmp_path / f"{name}.toml"
    p.write_text(resources.files("roofline_sym").joinpath("data", f"{name}.toml")
                 .read_text("utf-8"))
    return p


def test_any_entry_wrapped_as_a_calibration_writes_a_valid_file(tmp_path):
    h200 = rs.hardware("h200")
    plain = rs.load_hardware(Calibration.of(h200).to_toml(tmp_path / "plain.toml"))
    assert plain.entries[0].peak_flops == h200.peak_flops
    assert h200.sources["mem_bw"] in plain.entries[0].sources["mem_bw"]
    # an entry that is not the base keeps its own citations (under ENTRY)
    fitted = fit_hardware(synthesize("h200", ms.grid("quick"), TRUTH, noise=0.0), "h200")
    other = Calibration.of(fitted.hardware, rs.hardware("h100"))
    (hw,) = rs.load_hardware(other.to_toml(tmp_path / "other.toml")).entries
    assert hw.gemm_efficiency == fitted.hardware.gemm_efficiency
    assert hw.sources["mem_bw"].startswith("roofline_sym calibrated dataset, entry "
                                           "'H200 SXM (calibrated)'")


def test_a_file_that_would_not_load_is_not_written(tmp_path):
    h200 = rs.hardware("h200")
    bad = Calibration.of(h200, sources={"A": "a citation"},
                         entry_sources={"peak_flops_per_s": "NOPE; typo"})
    target = tmp_path / "bad.toml"
    with pytest.raises(HardwareError, match=r"bad.toml: .*cites unknown source key\(s\) 'NOPE'"):
        bad.to_toml(target)
    assert list(tmp_path.iterdir()) == []
    target.write_text("kept")
    with pytest.raises(ValueError, match="NOPE"):
        bad.to_toml(target)
    assert target.read_text() == "kept" and list(tmp_path.iterdir()) == [target]


def test_real_measurements_alias_the_gpu_name(tmp_path):
    meas = synthesize("h200", ms.grid("quick"), TRUTH, noise=0.0)
    n = len(meas)
    columns = {**meas.columns, "gpu": ("NVIDIA H200",) * n, "torch": ("2.13.0",) * n}
    real = mfile.Measurements(meas.cases, meas.time_s, columns, comments=(), source="run.csv")
    cal = fit_hardware(real)  # the file's GPU picks the base entry
    assert cal.base.name == "H200 SXM" and cal.hardware.aliases == ("NVIDIA H200",)
    assert "torch 2.13.0" in cal.meas_sources["MEAS"]
    assert rs.load_hardware(cal.to_toml(tmp_path / "x.toml")).get("NVIDIA H200").name \
        == "H200 SXM (calibrated)"


def test_a_parameter_no_row_depends_on_keeps_the_base_value():
    meas = synthesize("h200", ms.grid("default"), TRUTH, noise=0.0)
    big_gemms = meas.select(lambda c: c.kind == "gemm" and min(c.M, c.K, c.N) >= 4096)
    cal = fit_hardware(big_gemms, "h200")
    h200 = hardware_values(rs.hardware("h200"))
    assert cal.values["t_launch"] == h200["t_launch"] and cal.values["eta_mem"] == h200["eta_mem"]
    assert cal.values["eta_fp8"] == pytest.approx(0.66, rel=1e-3)
    assert any(n.startswith("t_launch: no measured row is in its regime") for n in cal.notes)


def test_fit_errors_are_clear():
    meas = synthesize("h200", ms.grid("quick"), noise=0.0)
    with pytest.raises(ValueError, match="has fp8 GEMM rows, but A100 SXM 80GB has no fp8 peak"):
        fit_hardware(meas, "a100")
    assert fit_hardware(meas).base.name == "H200 SXM"  # the GPU a synthetic file models
    with pytest.raises(ValueError, match="GPU 'Some GPU' is not in the "
                                         "default dataset; pass hardware="):
        fit_hardware(mfile.Measurements(meas.cases, meas.time_s,
                            {**meas.columns, "gpu": ("Some GPU",) * len(meas)}))
    with pytest.raises(ValueError, match=r"unknown hardware value\(s\) \['eta_fp4'\]"):
        synthesize("h200", ms.grid("quick"), {"eta_fp4": 0.5})


def test_synthetic_measurements_say_so():
    meas = synthesize("h200", ms.grid("quick"), TRUTH, noise=0.02, seed=0)
    assert meas.synthetic and meas.gpu == "SYNTHETIC model of H200 SXM"
    assert meas.comments[1].startswith("SYNTHETIC: generated by roofline_sym.fidelity.own_gpu.hardware_fit")
    again = synthesize("h200", ms.grid("quick"), TRUTH, noise=0.02, seed=0)
    np.testing.assert_array_equal(meas.time_s, again.time_s)


def test_a_written_calibration_keeps_what_the_gpu_cannot_run(tmp_path):
    # H200 runs no block-scaled GEMMs: the calibrated entry says so too
    (hw,) = rs.load_hardware(Calibration.of(rs.hardware("h200")).to_toml(tmp_path / "h.toml"))
    assert hw.block_scaling == () and not hw.supports_block_scaling("mx")
    with pytest.raises(ValueError, match="block-scaled"):
        rs.linear("mxfp8_cublas").on(hw)

"""The calculator page: its data, its files, and its numbers in a browser.

The page is written as the docs build and ``roofline-sym calculator`` write
it, loaded in headless Chromium (Debian's ``chromium`` and
``chromium-driver``; ``.ci/run`` installs them), its inputs set and its
numbers read back: each must equal what the library computes for the same
GPU, recipe, mode and shape (``evaluate``, ``evaluate_terms``, the band of
``speedup_band``, the exact break-even of ``rs.breakeven`` and the range of
``breakeven_range``) to 1e-9 relative, and the browser's console must hold
no error.  Without Chromium, its driver or selenium the browser tests skip.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest

import roofline_sym as rs
from roofline_sym.cli.cmd_calculator import INTERVAL, write
from roofline_sym.fidelity.published_tables.intervals import breakeven_range, speedup_band
from roofline_sym.model.outputs import OUTPUTS
from roofline_sym.output.calculator import (PAGE_FILES, block_steps, calculator_data,
                                            write_calculator)
from roofline_sym.output.javascript import model_function

DOCS = Path(__file__).resolve().parents[1] / "docs"
STEPS = [("llama3-8b", "tensorwise"), ("llama3-8b", "mxfp8_cublas")]
RTOL = 1e-9
# the page searches break-even points over 1 .. 2^32
SCAN = (1.0, 2.0 ** 32)


def close(got, want, what):
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    assert got.shape == want.shape, f"{what}: {got} != {want}"
    assert np.allclose(got, want, rtol=RTOL, atol=0, equal_nan=True), f"{what}: {got} != {want}"


# -- the data and the files, without a browser ------------------------------------------
def test_every_gpu_and_recipe_is_bound_or_says_why():
    data = calculator_data(lambda m: speedup_band(m, INTERVAL), gpus=["h100", "b200", "a100"])
    names = [g["name"] for g in data["gpus"]]
    assert len(data["models"]) == sum(len(rs.list_recipes(mode=m)) for m in ("training",
                                                                            "inference"))
    for key, entry in data["models"].items():
        mode, recipe = key.split("/")
        model = rs.linear(recipe, mode=mode)
        assert sorted(entry["on"]) + sorted(entry["unsupported"]) != []
        assert set(entry["on"]) | set(entry["unsupported"]) == set(names)
        assert [t["name"] for t in entry["terms"]] == [t.name for t in model.terms]
        for gpu, why in entry["unsupported"].items():
            assert why == model.unsupported_reason(rs.hardware(gpu))
        for gpu, on in entry["on"].items():
            assert on["band"] == list(speedup_band(model.on(gpu), INTERVAL))
    # a GPU's numbers as its record holds them, each field's source beside it
    h100 = data["gpus"][names.index("H100 SXM")]
    assert h100["params"]["BW"] == float(rs.hardware("h100").mem_bw)
    cited = {k: data["sources"][i] for k, i in h100["sources"].items()}
    assert cited == dict(rs.hardware("h100").sources)


def test_block_steps_name_each_shape_a_count_steps_along():
    # mxfp8 inference scales the input along K and the stored weight along K:
    # ceil(K/32) is the only count; training also scales along M and N
    assert block_steps(rs.linear("mxfp8", mode="inference")) == {"K": [32.0]}
    assert block_steps(rs.linear("blockwise")) == {"K": [128.0], "M": [128.0], "N": [128.0]}


def test_model_function_prints_every_term_from_the_model():
    m = rs.linear("rowwise", mode="inference")
    code = model_function(m)
    # one array of pieces per term, one time per term, the seven outputs
    pieces = code.split("const pieces = [")[1].split("];")[0]
    assert pieces.count("\n    [") == len(m.terms)
    assert all(f"{name}: " in code for name in OUTPUTS)
    assert "hand" not in code and "NaN" not in code
    with pytest.raises(rs.errors.RooflineError, match="unbound"):
        model_function(m.on("h100"))


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """The page as the docs build and ``roofline-sym calculator`` write it."""
    out = tmp_path_factory.mktemp("calculator")
    # two of the page's whole steps (each costs a second to build and bind)
    assert [p.name for p in write(out, steps=STEPS)] == list(PAGE_FILES)
    return out


def test_files_are_rewritten_only_when_they_change(tmp_path):
    def band(m):
        return (0.5, 2.0)

    paths = write_calculator(tmp_path, band, gpus=["h100"])
    stamps = [p.stat().st_mtime_ns for p in paths]
    write_calculator(tmp_path, band, gpus=["h100"])  # the docs build stays incremental
    assert [p.stat().st_mtime_ns for p in paths] == stamps
    (tmp_path / "calculator.js").write_text("// edited")
    write_calculator(tmp_path, band, gpus=["h100"])
    assert (tmp_path / "calculator.js").read_text() != "// edited"


def test_the_docs_page_loads_the_files_written(folder):
    data = json.loads((folder / "calculator-data.js").read_text().split(" = ", 1)[1][:-2])
    assert data["interval"] == INTERVAL and data["default_gpu"] == "H100 SXM"
    assert len(data["gpus"]) == len(rs.list_hardware())
    # the page of the docs site includes the same form and loads the same scripts
    page = (DOCS / "calculator.md").read_text()
    for name in ("calculator-form.html", "calculator.css", "calculator-data.js",
                 "calculator-models.js", "calculator.js"):
        assert f"_static/calculator/{name}" in page
    assert "calculator" in (DOCS / "index.md").read_text()


# -- the page in a browser ----------------------------------------------------------------
def _browser_paths():
    chromium = next(filter(None, map(shutil.which, ("chromium", "chromium-browser"))), None)
    driver = shutil.which("chromedriver")
    if chromium is None or driver is None:
        pytest.skip("headless Chromium and its driver are not installed (Debian: apt-get "
                    "install chromium chromium-driver; .ci/run installs them)")
    pytest.importorskip("selenium", reason="selenium (the test extra) is not installed")
    return chromium, driver


@pytest.fixture(scope="module")
def page(folder):
    chromium, driver_path = _browser_paths()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--disable-extensions", "--no-first-run"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    try:
        driver.get((folder / "calculator.html").as_uri())
        yield driver
    finally:
        driver.quit()


def no_console_errors(driver):
    errors = [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
    assert not errors, errors


# set the inputs as a user would (a select's change, a field's input) and read
# every number back from the page's elements (data-value: the full number)
_READ = """
function value(id) { return JSON.parse(document.getElementById(id).getAttribute("data-value")); }
function read() {
  const out = {status: document.getElementById("rc-status").textContent,
               hidden: document.getElementById("rc-results").hidden, outputs: {}, terms: []};
  if (out.hidden) { return out; }
  for (const el of document.querySelectorAll("[id^=rc-out-]")) {
    out.outputs[el.id.slice(7)] = value(el.id);
  }
  out.speedup = value("rc-speedup");
  out.band = [value("rc-band-low"), value("rc-band-high")];
  for (const row of document.querySelectorAll("#rc-terms tr")) {
    const cells = row.querySelectorAll("td");
    out.terms.push([row.dataset.term, Number(cells[1].dataset.value), cells[2].dataset.value]);
  }
  for (const p of ["m", "x"]) {
    out[p] = {points: value("rc-" + p + "star"),
              range: [value("rc-" + p + "range-low"), value("rc-" + p + "range-high")]};
  }
  return out;
}
"""
_SET_AND_READ = """
const [gpu, mode, recipe, shape] = arguments;
function set(id, value, event) {
  const el = document.getElementById(id);
  el.value = value;
  if (el.value !== value) { throw new Error(id + " has no option " + value); }
  if (event) { el.dispatchEvent(new Event(event, {bubbles: true})); }
}
set("rc-mode", mode, "change");  // refills the recipes
set("rc-gpu", gpu, null);
set("rc-recipe", recipe, null);
set("rc-M", String(shape[0]), null);
set("rc-K", String(shape[1]), null);
set("rc-N", String(shape[2]), "input");  // the page updates once, for all of them
return read();
""" + _READ

# (GPU, mode, recipe, M, K, N): every generation, both modes, every scaling family,
# shapes from a token to a large batch; 72704 = 32 * 2272 sits on a block step, and
# K, N = 1024, 4096 put a step and two roots of mxfp8 within two units of M
POINTS = [
    ("H100 SXM", "training", "tensorwise", 8192, 8192, 8192),
    ("H100 SXM", "training", "rowwise", 4096, 8192, 28672),
    ("H100 SXM", "inference", "rowwise", 1, 8192, 8192),
    ("H100 SXM", "inference", "tensorwise_static", 37, 4096, 14336),
    ("H100 PCIe", "training", "rowwise_with_gw_hp", 16384, 5120, 5120),
    ("H200 SXM", "training", "delayed", 2048, 12288, 4096),
    ("H800 SXM", "inference", "blockwise", 777, 7168, 2048),
    ("B200 (HGX)", "training", "mxfp8_cublas", 65536, 7168, 2048),
    ("B200 (HGX)", "training", "mxfp8_cublas", 34176, 1024, 4096),
    ("B200 (HGX)", "inference", "nvfp4", 16, 5120, 13824),
    ("B200 (HGX)", "training", "mxfp8_emulated", 8192, 8192, 8192),
    ("B300 (HGX)", "training", "mxfp4_cutlass", 72704, 1024, 4096),
    ("GB200 (per GPU)", "inference", "mxfp8", 100, 3000, 5000),
    ("GB300 (per GPU)", "training", "blockwise", 9000, 4096, 11008),
    ("RTX 5090", "inference", "nvfp4_static", 512, 4096, 4096),
    ("RTX 4090", "training", "tensorwise", 4096, 4096, 4096),
    ("L40S", "training", "blockwise", 3, 5, 7),
    ("MI300X", "training", "rowwise", 8192, 8192, 8192),
    ("MI325X", "inference", "tensorwise", 64, 8192, 29568),
    ("MI355X", "training", "mxfp8_32x32_weight", 12345, 6789, 1011),
    ("Gaudi 3", "training", "dynamic", 4096, 4096, 16384),
    ("H100 NVL", "inference", "rowwise", 2 ** 20, 4096, 4096),
    ("H100 96GB HBM2e", "training", "mxfp8_emulated", 4096, 4096, 4096),
    ("A100 SXM 80GB", "training", "mxfp8_emulated", 4096, 4096, 4096),
]


def _in_scan(values):
    return values[(values >= SCAN[0]) & (values <= SCAN[1])]


def check_point(read, gpu, mode, recipe, M, K, N):
    m = rs.linear(recipe, mode=mode).on(gpu)
    assert not read["hidden"], read["status"]
    out = m.evaluate(M, K, N)
    for name in OUTPUTS:
        close(read["speedup"] if name == "speedup" else read["outputs"][name], out[name], name)
    low, high = speedup_band(m, INTERVAL)
    close(read["band"], [low * out["speedup"], high * out["speedup"]], "band")
    terms = m.evaluate_terms(M, K, N)
    assert [t[0] for t in read["terms"]] == [t.name for t in m.terms]
    close([t[1] for t in read["terms"]], [float(terms[t.name][0]) for t in m.terms], "terms")
    assert [t[2] for t in read["terms"]] == [str(terms[t.name][1]) for t in m.terms]
    # break-even points (roots and block steps) of the exact solver
    along_m = rs.breakeven(m, solve_for="M", K=K, N=N).crossing_values
    close(read["m"]["points"], _in_scan(along_m), "M*")
    close(read["x"]["points"], _in_scan(rs.breakeven(m, along="cube").crossing_values), "x*")
    for p, fixed in (("m", dict(K=K, N=N)), ("x", {})):
        got = [math.nan if v is None else v for v in read[p]["range"]]
        close(got, breakeven_range(m, INTERVAL, **fixed), f"{p} range")


def test_page_agrees_with_evaluate_at_24_points(page):
    for gpu, mode, recipe, M, K, N in POINTS:
        read = page.execute_script(_SET_AND_READ, gpu, mode, recipe, [M, K, N])
        check_point(read, gpu, mode, recipe, M, K, N)
    no_console_errors(page)


def test_numbers_follow_typing(page):
    from selenium.webdriver.common.by import By

    page.execute_script(_SET_AND_READ, "H100 SXM", "training", "rowwise", [8192, 8192, 8192])
    field = page.find_element(By.ID, "rc-M")
    field.clear()
    field.send_keys("2048")  # each key an input event: the page follows every one
    read = page.execute_script("return read();" + _READ)
    check_point(read, "H100 SXM", "training", "rowwise", 2048, 8192, 8192)
    no_console_errors(page)


@pytest.mark.parametrize("shape, message", [
    (["-8", "8192", "8192"], "M must be a whole number"),
    (["8192", "8k", "8192"], "K must be a whole number"),
    (["8192", "8192", "0"], "N must lie in 1 .. 2^40"),
    (["8192", "8192.5", "8192"], "K must be a whole number"),
])
def test_bad_shapes_are_named_and_show_no_number(page, shape, message):
    read = page.execute_script(_SET_AND_READ, "H100 SXM", "training", "tensorwise", shape)
    assert read["hidden"] and read["status"] == message + ", such as 8192" * (
        "whole" in message)
    no_console_errors(page)


def test_a_recipe_the_gpu_cannot_run_says_why(page):
    read = page.execute_script(_SET_AND_READ, "H100 SXM", "training", "mxfp8_cublas",
                               [8192, 8192, 8192])
    want = rs.linear("mxfp8_cublas").unsupported_reason(rs.hardware("h100"))
    assert read["hidden"] and read["status"] == want
    no_console_errors(page)


# -- whole steps ----------------------------------------------------------------------------
_SET_STEP_AND_READ = """
const [model, recipe, gpu, S, B] = arguments;
for (const [id, value] of [["rs-model", model], ["rs-recipe", recipe], ["rs-gpu", gpu],
                           ["rs-S", S], ["rs-B", B]]) {
  const el = document.getElementById(id);
  el.value = value;
  if (el.value !== value) { throw new Error(id + " has no option " + value); }
}
document.getElementById("rs-B").dispatchEvent(new Event("input", {bubbles: true}));
const out = {status: document.getElementById("rs-status").textContent,
             hidden: document.getElementById("rs-results").hidden, outputs: {}};
if (!out.hidden) {
  for (const el of document.querySelectorAll("[id^=rs-out-]")) {
    out.outputs[el.id.slice(7)] = JSON.parse(el.dataset.value);
  }
  out.speedup = JSON.parse(document.getElementById("rs-speedup").dataset.value);
  out.band = ["rs-band-low", "rs-band-high"].map(
    id => JSON.parse(document.getElementById(id).dataset.value));
}
return out;
"""

# (model, recipe, GPU, sequence length, local batch): both recipes, three generations
STEP_POINTS = [
    ("llama3-8b", "tensorwise", "H100 SXM", 8192, 1),
    ("llama3-8b", "tensorwise", "H200 SXM", 131072, 1),
    ("llama3-8b", "tensorwise", "MI300X", 2048, 4),
    ("llama3-8b", "tensorwise", "RTX 5090", 1024, 3),
    ("llama3-8b", "mxfp8_cublas", "B200 (HGX)", 8192, 1),
    ("llama3-8b", "mxfp8_cublas", "GB300 (per GPU)", 4096, 2),
]


def test_a_whole_step_agrees_with_its_evaluate_and_its_band(page):
    for model, recipe, gpu, S, B in STEP_POINTS:
        read = page.execute_script(_SET_STEP_AND_READ, model, recipe, gpu, str(S), str(B))
        assert not read["hidden"], read["status"]
        bound = rs.step(model, recipe, gpus=8).on(gpu)
        names = [name for name, _ in bound.layout.outputs]
        out = bound.evaluate(S, B, names)
        assert set(read["outputs"]) | {"speedup"} == set(names)
        for name in names:
            got = read["speedup"] if name == "speedup" else read["outputs"][name]
            close(got, out[name], name)
        # the band as predict_steps gives it for the same run (a row of a step table)
        row = {"source_id": "x", "gpu": gpu, "gpus": "8", "model": model, "recipe": recipe,
               "mode": "training", "seq_len": str(S), "local_batch": str(B), "dp_shard": "8"}
        predicted = rs.fidelity.predict_steps([row], interval=INTERVAL)
        close(read["speedup"], predicted["speedup"][0], "speedup as predict_steps")
        close(read["band"], [predicted["low"][0], predicted["high"][0]], "step band")
    no_console_errors(page)


def test_a_step_the_gpu_cannot_run_says_why(page):
    read = page.execute_script(_SET_STEP_AND_READ, "llama3-8b", "mxfp8_cublas", "H100 SXM",
                               "8192", "1")
    assert read["hidden"] and "MX" in read["status"]
    read = page.execute_script(_SET_STEP_AND_READ, "llama3-8b", "tensorwise", "Gaudi 3",
                               "8192", "1")
    assert read["hidden"] and "links of Gaudi 3" in read["status"]
    read = page.execute_script(_SET_STEP_AND_READ, "llama3-8b", "tensorwise", "H100 SXM",
                               "8192", "0")
    assert read["hidden"] and read["status"] == "the local batch must lie in 1 .. 2^31"
    no_console_errors(page)

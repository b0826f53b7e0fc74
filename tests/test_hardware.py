"""The hardware datasets: facts, sources, lookup, validation of files."""

import dataclasses
import textwrap

import pytest
import sympy

import roofline_sym as rs
from roofline_sym import symbols as S
from roofline_sym.devices import DATASETS, HardwareError, dataset

# -- facts from the datasheets (hardware-facts.md) ---------------------------
FACTS = [
    ("h100-sxm", "mem_bw", 3.35e12),
    ("h200", "mem_bw", 4.8e12),
    ("h100-pcie", "mem_bw", 2.0e12),
    ("a100", "mem_bw", 2.039e12),
    ("b200", "mem_bw", 8.0e12),
    ("rtx-5090", "mem_bw", 1.792e12),
    ("mi300x", "mem_bw", 5.3e12),
    ("h100-sxm", "bf16", 989.4e12),
    ("h100-sxm", "fp8", 1978.9e12),
    ("b200", "fp4", 9e15),
    ("b200", "bf16", 2.25e15),
    ("mi355x", "fp4", 10066e12),
    ("l40s", "fp8", 733e12),
    ("a100", "bf16", 312e12),
]


@pytest.mark.parametrize("name, field, value", FACTS)
def test_datasheet_facts(name, field, value):
    hw = rs.hardware(name)
    got = hw.mem_bw if field == "mem_bw" else hw.peak_flops[field]
    assert got == sympy.Rational(repr(value))


@pytest.mark.parametrize("name", ["a100", "l40s", "rtx-4090", "mi300x", "h100-sxm", "h200"])
def test_no_fp4_where_there_is_no_fp4_hardware(name):
    assert rs.hardware(name).peak_flops.get("fp4") is None


def test_a100_has_no_fp8():
    assert not rs.hardware("a100").supports("fp8")


def test_default_dataset_is_large_and_sourced():
    ds = dataset("default")
    assert len(ds) >= 14
    for hw in ds:
        assert {"peak_flops", "gemm_efficiency", "mem_bw", "mem_efficiency",
                "launch_overhead"} <= set(hw.sources), hw.name
        assert all(text.strip() for text in hw.sources.values()), hw.name
        # every dtype the models use has an efficiency wherever it has a peak
        for d in ("bf16", "fp8", "fp4"):
            assert (d in hw.peak_flops) == (d in hw.gemm_efficiency), (hw.name, d)


@pytest.mark.parametrize("ds", DATASETS)
def test_every_dataset_entry_validates(ds):
    for hw in dataset(ds):
        assert hw.dataset == ds
        for value in hw.parameters.values():
            assert isinstance(value, sympy.Rational)  # exact, never a Float


REQUIRED_GPUS = ["A100 SXM", "H100 SXM", "H100 PCIe", "H100 NVL", "H200", "B200", "GB200",
                 "B300", "GB300", "L40S", "RTX 4090", "RTX 5090", "MI300X", "MI325X",
                 "MI355X", "Gaudi 3"]


@pytest.mark.parametrize("name", REQUIRED_GPUS)
def test_required_gpus_present(name):
    assert rs.hardware(name).name.startswith(name.split()[0])


# -- lookup -------------------------------------------------------------------
@pytest.mark.parametrize("query, expected", [
    ("h100", "H100 SXM"), ("H100-SXM", "H100 SXM"), ("h100 sxm", "H100 SXM"),
    ("h100_sxm", "H100 SXM"), ("h100-pcie", "H100 PCIe"), ("h200", "H200 SXM"),
    ("b200", "B200 (HGX)"), ("a100", "A100 SXM 80GB"), ("l40s", "L40S"),
    ("rtx-5090", "RTX 5090"), ("mi300x", "MI300X"), ("gaudi3", "Gaudi 3"),
    # torch.cuda.get_device_name() strings
    ("NVIDIA H100 80GB HBM3", "H100 SXM"), ("NVIDIA H200", "H200 SXM"),
    ("NVIDIA H100 PCIe", "H100 PCIe"), ("NVIDIA B200", "B200 (HGX)"),
    ("NVIDIA A100-SXM4-80GB", "A100 SXM 80GB"), ("NVIDIA GeForce RTX 4090", "RTX 4090"),
    ("AMD Instinct MI300X", "MI300X"), ("NVIDIA L40S", "L40S"),
])
def test_lookup_by_alias_and_device_name(query, expected):
    assert rs.hardware(query).name == expected


# torch.cuda.get_device_name() on each shipped GPU (CUDA and ROCm builds), and
# the same string without the vendor word, as older drivers and some tools print it
DEVICE_NAMES = {
    "NVIDIA A100-SXM4-80GB": "A100 SXM 80GB",
    "NVIDIA H100 80GB HBM3": "H100 SXM",
    "NVIDIA H100 PCIe": "H100 PCIe",
    "NVIDIA H100 NVL": "H100 NVL",
    "NVIDIA H800": "H800 SXM",
    "NVIDIA H200": "H200 SXM",
    "NVIDIA B200": "B200 (HGX)",
    "NVIDIA GB200": "GB200 (per GPU)",
    "NVIDIA B300 SXM6 AC": "B300 (HGX)",
    "NVIDIA GB300": "GB300 (per GPU)",
    "NVIDIA L40S": "L40S",
    "NVIDIA GeForce RTX 4090": "RTX 4090",
    "NVIDIA GeForce RTX 5090": "RTX 5090",
    "AMD Instinct MI300X": "MI300X",
    "AMD Instinct MI325X": "MI325X",
    "AMD Instinct MI355X": "MI355X",
}


@pytest.mark.parametrize("device, expected", DEVICE_NAMES.items())
@pytest.mark.parametrize("spelling", [
    lambda d: d,                              # as torch prints it
    lambda d: d.split(" ", 1)[1],             # without the vendor word
    lambda d: f"  {d.upper()}  ",             # case and spaces do not matter
    lambda d: d.split(" ", 1)[1].lower().replace(" ", "_"),
], ids=["torch", "no-vendor", "upper", "snake"])
def test_every_device_name_resolves_with_or_without_its_vendor(device, expected, spelling):
    assert rs.hardware(spelling(device)).name == expected


@pytest.mark.parametrize("dataset, device, expected", [
    ("torchao", "H100 80GB HBM3", "NVIDIA H100"),
    ("torchao", "NVIDIA H100 80GB HBM3", "NVIDIA H100"),
    ("torchao", "H100", "NVIDIA H100"),
    ("torchao", "B200", "NVIDIA B200"),
    ("torchao", "Instinct MI300X", "AMD Instinct MI300X"),
    ("torchao", "GeForce RTX 5090", "NVIDIA GeForce RTX 5090"),
    ("torchao", "B300 SXM6 AC", "NVIDIA B300 SXM6 AC"),
    ("seed", "H100 80GB HBM3", "NVIDIA H100"),
])
def test_device_names_without_the_vendor_in_every_dataset(dataset, device, expected):
    assert rs.hardware(device, dataset=dataset).name == expected


def test_a_vendor_word_is_never_guessed():
    # dropping "NVIDIA" from the query would make "NVIDIA H100" (which H100?) the
    # SXM part: only the entries' own device names answer without the vendor
    for query in ("NVIDIA H100", "NVIDIA H100 SXM", "AMD MI300X", "NVIDIA", "nvidia-"):
        with pytest.raises(rs.devices.UnknownHardwareError):
            rs.hardware(query)


def test_a_short_device_name_that_two_entries_share_names_neither():
    from roofline_sym.devices import Dataset

    h100 = rs.hardware("h100")
    a = h100.replace(name="A", aliases=("NVIDIA X1", "NVIDIA X2"))
    b = h100.replace(name="B", aliases=("AMD X1",))
    x2 = h100.replace(name="X2", aliases=())  # a name of its own wins over a short form
    ds = Dataset("toy", (a, b, x2))
    assert ds.get("nvidia x1") is a and ds.get("AMD X1") is b and ds.get("NVIDIA X2") is a
    assert ds.get("x2") is x2
    with pytest.raises(rs.devices.UnknownHardwareError):
        ds.get("X1")


def test_no_prefix_matching():
    # a prefix rule would map an H200 NVL to H100 or H200 numbers
    for query in ("NVIDIA H200 NVL", "NVIDIA H1", "NVIDIA H100 80GB HBM3 extra", "H"):
        with pytest.raises(rs.devices.UnknownHardwareError):
            rs.hardware(query)


def test_unknown_name_lists_close_matches_and_is_a_lookup_error():
    with pytest.raises(LookupError, match="did you mean.*H200 SXM"):
        rs.hardware("h20")


def test_list_hardware():
    names = rs.list_hardware()
    assert "H100 SXM" in names and len(names) == len(set(names))
    assert rs.list_hardware("torchao") == [
        "NVIDIA H100", "NVIDIA B200", "NVIDIA B300 SXM6 AC", "NVIDIA GB200",
        "AMD Instinct MI300X", "NVIDIA GeForce RTX 5090"]


def test_unknown_dataset():
    with pytest.raises(ValueError, match="torchao"):
        rs.list_hardware("tpu")


# -- torchao and seed tables --------------------------------------------------
TORCHAO = {  # torchao 0.18 gpu_name_to_specs, as torchao has them
    "NVIDIA H100": (989e12, 1979e12, None, 2.4e12, 0.78, 0.92),
    "NVIDIA B200": (2.25e15, 4.5e15, 9.0e15, (7680 / 8) * 3.996e9 * 2, 0.78, 0.92),
    "NVIDIA B300 SXM6 AC": (2.25e15, 4.5e15, 14e15, 8e12, 0.82, 0.84),
    "NVIDIA GB200": (2.25e15, 4.5e15, 9.0e15, 8.0e12, 0.78, 0.92),
    "AMD Instinct MI300X": (1307e12, 2614e12, None, 5.3e12, 0.78, 0.92),
}


@pytest.mark.parametrize("name", TORCHAO)
def test_torchao_table(name):
    bf16, fp8, fp4, bw, gemm, mem = TORCHAO[name]
    hw = rs.hardware(name, dataset="torchao")
    assert float(hw.peak_flops["bf16"]) == bf16 and float(hw.peak_flops["fp8"]) == fp8
    assert (float(hw.peak_flops["fp4"]) if fp4 else None) == fp4
    assert float(hw.mem_bw) == pytest.approx(bw, rel=1e-15)
    assert all(float(v) == gemm for v in hw.gemm_efficiency.values())
    assert float(hw.mem_efficiency) == mem
    assert hw.launch_overhead == sympy.Rational(2, 10**6)


def test_torchao_rtx5090_bandwidth_corrected_and_flagged():
    hw = rs.hardware("NVIDIA GeForce RTX 5090", dataset="torchao")
    assert hw.mem_bw == sympy.Rational("1.792e12")
    assert any("1.792e15" in note for note in hw.notes)


def test_torchao_rtx5090_missing_efficiencies_refused():
    hw = rs.hardware("NVIDIA GeForce RTX 5090", dataset="torchao")
    model = rs.linear("tensorwise", preset="torchao")
    with pytest.raises(rs.devices.MissingHardwareValueError, match="gemm_efficiency.bf16.*replace"):
        model.on(hw)
    fixed = hw.replace(gemm_efficiency={"bf16": 0.7, "fp8": 0.7}, mem_efficiency=0.9)
    assert float(model.on(fixed).evaluate(4096, 4096, 4096)["speedup"]) > 0


def test_seed_constants():
    hw = rs.hardware("h100", dataset="seed")
    p = hw.parameters
    assert p[S.peak_flops("bf16")] == 989 * 10**12
    assert p[S.peak_flops("fp8")] == 1979 * 10**12
    assert p[S.mem_bw()] == sympy.Rational(24, 10) * 10**12
    assert p[S.gemm_efficiency("bf16")] == p[S.gemm_efficiency("fp8")] == sympy.Rational(6, 10)
    assert p[S.mem_efficiency()] == sympy.Rational(92, 100)
    assert p[S.launch_overhead()] == sympy.Rational(2, 10**6)


def test_parameters_map_the_factory_symbols():
    hw = rs.hardware("h100")
    params = hw.parameters
    # keyed by the very symbols the models are built from, with the entry's numbers
    keys = {str(s): s for s in params}
    assert keys["BW"] is S.mem_bw() and keys["P_fp8"] is S.peak_flops("fp8")
    assert params[S.mem_bw()] == sympy.Rational("3.35e12")
    assert params[S.peak_flops("fp8")] == sympy.Rational("1978.9e12")
    # so xreplace binds every hardware symbol of a model
    bound = rs.linear("tensorwise").speedup.xreplace(params)
    assert bound.free_symbols == {rs.M, rs.K, rs.N}


def test_equal_entries_are_equal_and_hash_alike():
    hw = rs.hardware("h100")
    twin = rs.Hardware(**{f.name: getattr(hw, f.name) for f in dataclasses.fields(hw)})
    assert twin is not hw and twin == hw and hash(twin) == hash(hw)
    assert hw.replace(mem_bw=4e12) != hw
    assert rs.hardware("h100", dataset="seed") != hw


# -- validation of user files -------------------------------------------------
GOOD = """
[sources]
ME = "my measurements"
[[gpu]]
name = "Toy"
aliases = ["toy"]
peak_flops_per_s = { bf16 = 1e15, fp8 = 2e15 }
gemm_efficiency = { bf16 = 0.8, fp8 = 0.7 }
mem_bw_bytes_per_s = 3e12
mem_efficiency = 0.9
launch_overhead_s = 2e-6
[gpu.sources]
peak_flops_per_s = "ME"
gemm_efficiency = "ME"
mem_bw_bytes_per_s = "ME"
mem_efficiency = "assumed; a guess"
launch_overhead_s = "ME; one-element kernel"
"""


def write(tmp_path, text):
    path = tmp_path / "hw.toml"
    path.write_text(textwrap.dedent(text))
    return path


def test_user_file_loads(tmp_path):
    ds = rs.load_hardware(write(tmp_path, GOOD))
    hw = ds.get("TOY")
    assert hw.mem_bw == 3 * 10**12 and hw.sources["mem_bw"] == "my measurements"
    assert rs.hardware("toy", dataset=ds) is hw


BAD = [
    # (replace this, with that, message pattern)
    ("mem_bw_bytes_per_s = 3e12", "mem_bw_bytes_per_s = 3e15",
     r"entry 'Toy', field 'mem_bw_bytes_per_s': 3e\+15 B/s is outside"),
    ("mem_bw_bytes_per_s = 3e12", "mem_bw_bytes_per_s = 3e9", "field 'mem_bw_bytes_per_s'"),
    ("fp8 = 2e15 }", "fp8 = 0.5e15 }", r"field 'peak_flops_per_s.fp8'.*below the bf16 peak"),
    ("bf16 = 1e15, fp8", "bf16 = 1e9, fp8", r"field 'peak_flops_per_s.bf16'.*outside"),
    ("{ bf16 = 1e15, fp8 = 2e15 }", "{ bf16 = 1e15, fp8_sparse = 4e15 }",
     r"field 'peak_flops_per_s.fp8_sparse': sparse peaks are not accepted"),
    ("mem_efficiency = 0.9", "mem_efficiency = 1.2", r"field 'mem_efficiency'.*\(0.01, 1\]"),
    ("{ bf16 = 0.8, fp8 = 0.7 }", "{ bf16 = 0.8, fp8 = 0 }",
     r"field 'gemm_efficiency.fp8'.*\(0.01, 1\]"),
    ("mem_efficiency = 0.9", "mem_efficiency = 1e-300",
     r"field 'mem_efficiency': 1e-300 is outside \(0.01, 1\] \(an efficiency fraction\)"),
    ("launch_overhead_s = 2e-6", "launch_overhead_s = 1e-320",
     r"field 'launch_overhead_s': 1e-320 s is outside \[1e-07, 0.001\] s"),
    ('name = "Toy"', 'name = "Toy\\u001b[2J"', "field 'name'.*control characters"),
    ("launch_overhead_s = 2e-6", "launch_overhead_s = 2", "field 'launch_overhead_s'"),
    ('mem_efficiency = "assumed; a guess"', "", "field 'mem_efficiency'.*has no source"),
    ('gemm_efficiency = "ME"', 'gemm_efficiency = "XX"', "unknown source key.*'XX'"),
    ("launch_overhead_s = 2e-6", "launch_overhead_s = 2e-6\nsparse_flops = 1e15",
     "field 'sparse_flops'.*sparse"),
    ("mem_bw_bytes_per_s = 3e12", 'mem_bw_bytes_per_s = "fast"', "expected a number"),
    ('name = "Toy"', 'name = "Toy"\nname2 = 1', "field 'name2': unknown field"),
    ("mem_bw_bytes_per_s = 3e12\n", "", "field 'mem_bw_bytes_per_s': required"),
]


@pytest.mark.parametrize("old, new, message", BAD)
def test_bad_files_rejected_with_file_entry_field(tmp_path, old, new, message):
    assert old in GOOD
    path = write(tmp_path, GOOD.replace(old, new, 1))
    with pytest.raises(HardwareError, match=message) as info:
        rs.load_hardware(path)
    assert str(path) in str(info.value)


# the links a step talks over, added to GOOD: values, then their sources
LINKS = ("link_bw_bytes_per_s = { scale_up = 450e9, scale_out = 50e9 }\n"
         "link_efficiency = { scale_up = 0.8, scale_out = 0.85 }\nscale_up_gpus = 8\n",
         'link_bw_bytes_per_s = "ME"\nlink_efficiency = "ME; busbw"\nscale_up_gpus = "ME"\n')


def _with_links(values=LINKS[0], sources=LINKS[1]):
    head, tail = GOOD.split("[gpu.sources]")
    return f"{head.rstrip()}\n{values}\n[gpu.sources]{tail}{sources}"


def test_links_join_the_record(tmp_path):
    hw = rs.load_hardware(write(tmp_path, _with_links())).get("toy")
    assert hw.has_links and hw.scale_up_gpus == 8 and hw.sources["link_efficiency"] == (
        "my measurements; busbw")
    assert hw.parameters[S.link_bandwidth("scale_out")] == 50 * 10 ** 9
    assert hw.parameters[S.link_efficiency("scale_up")] == sympy.Rational(4, 5)
    assert not rs.load_hardware(write(tmp_path, GOOD)).get("toy").has_links


@pytest.mark.parametrize("old, new, message", [
    ("scale_out = 50e9", "scale_out = 50e15",
     r"field 'link_bw_bytes_per_s.scale_out': 5e\+16 B/s is outside \[1e\+08, 1e\+13\]"),
    ("scale_out = 0.85", "scale_out = 1.5", r"field 'link_efficiency.scale_out'.*\(0.01, 1\]"),
    ("scale_up_gpus = 8", "scale_up_gpus = 0", r"field 'scale_up_gpus': 0 GPUs is outside"),
    ("scale_up_gpus = 8", "scale_up_gpus = 8.5", "field 'scale_up_gpus': expected a whole"),
    ("scale_up_gpus = 8", "scale_up_gpus = true", "field 'scale_up_gpus': expected a whole"),
    (", scale_out = 50e9", "", r"field 'link_bw_bytes_per_s.scale_out': required"),
    ("scale_up_gpus = ", "# scale_up_gpus = ", r"field 'scale_up_gpus': required with link_bw"),
    ("scale_up = 0.8", "nvlink = 0.8", r"field 'link_efficiency.nvlink': unknown key"),
    ('link_efficiency = "ME; busbw"\n', "", "field 'link_efficiency': has no source"),
])
def test_bad_links_name_the_field(tmp_path, old, new, message):
    text = _with_links(*(part.replace(old, new, 1) for part in LINKS))
    assert text != _with_links()
    with pytest.raises(HardwareError, match=message):
        rs.load_hardware(write(tmp_path, text))


def test_shipped_gpus_give_their_links():
    # every shipped GPU a step may span has them, each with a source; Gaudi 3's
    # scale-out network is its own Ethernet ports, not given yet
    for hw in dataset("default"):
        assert hw.has_links == (hw.name != "Gaudi 3"), hw.name
        if hw.has_links:
            assert all(hw.sources[f] for f in ("link_bw", "link_efficiency", "scale_up_gpus"))
    assert rs.hardware("gb200").scale_up_gpus == 72 and rs.hardware("h100-nvl").scale_up_gpus == 2


def test_duplicate_alias_rejected(tmp_path):
    second = "[[gpu]]" + GOOD.split("[[gpu]]", 1)[1].replace('name = "Toy"', 'name = "Toy 2"')
    with pytest.raises(HardwareError, match="'toy' already names 'Toy'"):
        rs.load_hardware(write(tmp_path, GOOD + "\n" + second))


def test_unreadable_and_invalid_toml(tmp_path):
    with pytest.raises(HardwareError, match="cannot read"):
        rs.load_hardware(tmp_path / "missing.toml")
    with pytest.raises(HardwareError, match="not valid TOML"):
        rs.load_hardware(write(tmp_path, "[[gpu]\nname="))


def test_hardware_constructor_validates():
    with pytest.raises(HardwareError, match="a bf16 peak is required"):
        rs.Hardware("X", peak_flops={"fp8": 1e15}, mem_bw=1e12)
    with pytest.raises(HardwareError, match="unknown dtype"):
        rs.Hardware("X", peak_flops={"bf16": 1e15, "fp6": 1e15}, mem_bw=1e12)


# -- block-scaled GEMMs -------------------------------------------------------
@pytest.mark.parametrize("gpu, recipe, mode, ok", [
    ("h100", "mxfp8_cublas", "training", False),     # Hopper: no MX hardware
    ("h100", "mxfp8_emulated", "training", True),    # emulated: bf16 GEMMs
    ("b200", "mxfp8_cublas", "training", True),
    ("b200", "nvfp4", "inference", True),
    ("mi355x", "nvfp4", "inference", False),         # CDNA4 runs MX, not NVFP4
    ("mi355x", "mxfp4", "inference", True),
    ("h200", "blockwise", "training", True),         # fp32 block scales in software
])
def test_block_scaled_recipes_need_hardware_support(gpu, recipe, mode, ok):
    model = rs.linear(recipe, mode=mode)
    hw = rs.hardware(gpu)
    assert (model.unsupported_reason(hw) is None) == ok
    if not ok:
        with pytest.raises(ValueError, match="block-scaled GEMMs"):
            model.on(hw)


def test_block_scaling_unstated_is_not_checked():
    # torchao's table says nothing about it; torchao models MX on H100
    hw = rs.hardware("NVIDIA H100", dataset="torchao")
    assert hw.block_scaling is None
    assert rs.linear("mxfp8_cublas", preset="torchao").on(hw)


def test_block_scaling_values_validated():
    with pytest.raises(HardwareError, match="unknown family 'mxfp6'"):
        rs.Hardware("X", peak_flops={"bf16": 1e15}, mem_bw=1e12, block_scaling=["mxfp6"])


# -- review fixes: types, messages, replace, equality, lookup hints ------------
def _bad(tmp_path, text, message):
    path = write(tmp_path, text)
    with pytest.raises(HardwareError, match=message) as info:
        rs.load_hardware(path)
    assert str(path) in str(info.value)
    return str(info.value)


WITH_BLOCK_SCALING = GOOD.replace(
    "launch_overhead_s = 2e-6\n", 'launch_overhead_s = 2e-6\nblock_scaling = ["mx"]\n', 1
).replace('launch_overhead_s = "ME; one-element kernel"\n',
          'launch_overhead_s = "ME; one-element kernel"\nblock_scaling = "ME"\n', 1)


def test_block_scaling_from_a_file_with_its_source(tmp_path):
    hw = rs.load_hardware(write(tmp_path, WITH_BLOCK_SCALING)).get("toy")
    assert hw.block_scaling == ("mx",) and hw.sources["block_scaling"] == "my measurements"
    assert hw.supports_block_scaling("mx") and not hw.supports_block_scaling("nvfp4")


STRING_NOT_LIST = [
    # a bare string would be split into letters: ('m', 'i', 'n', 'e')
    (GOOD.replace('aliases = ["toy"]', 'aliases = "mine"'),
     r"entry 'Toy', field 'aliases': expected a list of strings, got 'mine'"),
    (GOOD.replace('aliases = ["toy"]', 'aliases = ["toy"]\nnotes = "hello"'),
     r"entry 'Toy', field 'notes': expected a list of strings, got 'hello'"),
    (WITH_BLOCK_SCALING.replace('block_scaling = ["mx"]', 'block_scaling = "mx"'),
     r"entry 'Toy', field 'block_scaling': expected a list of strings, got 'mx'"),
    (GOOD.replace('aliases = ["toy"]', 'aliases = ["toy", 3]'),
     r"entry 'Toy', field 'aliases': expected a list of strings"),
]


@pytest.mark.parametrize("text, message", STRING_NOT_LIST)
def test_string_lists_must_be_lists(tmp_path, text, message):
    _bad(tmp_path, text, message)


def test_string_lists_must_be_lists_in_python():
    for name in ("aliases", "notes", "block_scaling"):
        with pytest.raises(HardwareError, match=f"field '{name}': expected a list of strings"):
            rs.Hardware("X", peak_flops={"bf16": 1e15}, mem_bw=1e12, **{name: "mx"})


NOT_A_NUMBER = [
    ("mem_bw_bytes_per_s = 3e12", 'mem_bw_bytes_per_s = "3e12"',
     r"field 'mem_bw_bytes_per_s': expected a number, got '3e12'"),
    ("mem_bw_bytes_per_s = 3e12", "mem_bw_bytes_per_s = nan",
     r"field 'mem_bw_bytes_per_s': must be a finite number, got nan"),
    ("mem_bw_bytes_per_s = 3e12", "mem_bw_bytes_per_s = inf",
     r"field 'mem_bw_bytes_per_s': must be a finite number, got inf"),
    ("fp8 = 2e15 }", "fp8 = inf }", r"field 'peak_flops_per_s.fp8': must be a finite number"),
    ("fp8 = 2e15 }", 'fp8 = "2e15" }', r"field 'peak_flops_per_s.fp8': expected a number"),
    ("fp8 = 0.7 }", "fp8 = -nan }", r"field 'gemm_efficiency.fp8': must be a finite number"),
    ("mem_efficiency = 0.9", "mem_efficiency = true",
     r"field 'mem_efficiency': expected a number, got True"),
    ("launch_overhead_s = 2e-6", 'launch_overhead_s = "2us"',
     r"field 'launch_overhead_s': expected a number"),
]


@pytest.mark.parametrize("old, new, message", NOT_A_NUMBER)
def test_type_errors_name_the_toml_field(tmp_path, old, new, message):
    assert old in GOOD
    _bad(tmp_path, GOOD.replace(old, new, 1), r"entry 'Toy', " + message)


def test_type_errors_name_the_field_in_python():
    with pytest.raises(HardwareError, match=r"entry 'X', field 'mem_bw': must be a finite"):
        rs.Hardware("X", peak_flops={"bf16": 1e15}, mem_bw=float("inf"))
    with pytest.raises(HardwareError, match=r"field 'peak_flops.fp8': must be a finite"):
        rs.Hardware("X", peak_flops={"bf16": 1e15, "fp8": float("nan")}, mem_bw=1e12)
    with pytest.raises(HardwareError, match=r"field 'mem_efficiency': expected a number"):
        rs.Hardware("X", peak_flops={"bf16": 1e15}, mem_bw=1e12, mem_efficiency=True)
    with pytest.raises(HardwareError, match=r"field 'peak_flops': expected a mapping"):
        rs.Hardware("X", peak_flops=1e15, mem_bw=1e12)
    with pytest.raises(HardwareError, match=r"field 'name': expected a non-empty string"):
        rs.Hardware(3, peak_flops={"bf16": 1e15}, mem_bw=1e12)


MALFORMED = [
    ("gpu = [1]\n", r": entry #1: expected a \[\[gpu\]\] table, got 1"),
    ("gpu = 3\n", r": 'gpu' must be an array of \[\[gpu\]\] tables"),
    ("dataset = 3\n" + GOOD, r": \[dataset\] must be a table"),
    ("[dataset]\nname = 3\n" + GOOD, r": \[dataset\], field 'name': expected a string"),
    (GOOD.replace('ME = "my measurements"', "ME = 3"),
     r": \[sources\], key 'ME': the citation must be a non-empty string, got 3"),
    (GOOD.replace('name = "Toy"', "name = 3"),
     r": entry #1, field 'name': expected a non-empty string, got 3"),
    (GOOD.split("[gpu.sources]")[0] + 'sources = "mem_bw_bytes_per_s"\n',
     r": entry 'Toy', field 'sources': expected a \[gpu.sources\] table"),
    (GOOD.replace('mem_bw_bytes_per_s = "ME"', "mem_bw_bytes_per_s = 3"),
     r": entry 'Toy', field 'mem_bw_bytes_per_s': source must be a non-empty string"),
]


@pytest.mark.parametrize("text, message", MALFORMED)
def test_malformed_files_raise_hardware_errors(tmp_path, text, message):
    _bad(tmp_path, text, message)


def test_malformed_file_in_the_cli_is_one_line_not_a_traceback(tmp_path, capsys):
    from roofline_sym.cli import main
    path = write(tmp_path, "gpu = [1]\n")
    try:
        code = main(["hardware", "--hardware-file", str(path)])
    except SystemExit as exc:
        code = exc.code
    err = capsys.readouterr().err
    assert code not in (0, None) and "expected a [[gpu]] table" in err
    assert "Traceback" not in err


def test_table_message_shows_toml_braces(tmp_path):
    msg = _bad(tmp_path, GOOD.replace("{ bf16 = 0.8, fp8 = 0.7 }", "0.8"),
               r"entry 'Toy', field 'gemm_efficiency': expected a table")
    assert "{ bf16 = ..., fp8 = ... }" in msg and "{{" not in msg


def test_missing_source_message_reads_well(tmp_path):
    msg = _bad(tmp_path, WITH_BLOCK_SCALING.replace('block_scaling = "ME"\n', ""),
               r"entry 'Toy', field 'block_scaling': has no source; add it under "
               r"\[gpu.sources\]")
    assert "source has no source" not in msg


def test_replace_marks_overridden_sources():
    h100 = rs.hardware("h100")
    datasheet = h100.sources["mem_bw"]
    new = h100.replace(mem_bw=4e12)
    assert new.sources["mem_bw"] == "user override (Hardware.replace)"
    assert new.sources["peak_flops"] == h100.sources["peak_flops"]  # untouched
    assert h100.sources["mem_bw"] == datasheet
    eff = h100.replace(gemm_efficiency={**h100.gemm_efficiency, "fp8": 0.5})
    assert eff.sources["gemm_efficiency"] == "user override (Hardware.replace)"
    assert h100.replace(block_scaling=["mx"]).sources["block_scaling"] == (
        "user override (Hardware.replace)")
    # an unchanged value keeps its source; a removed one loses it
    assert h100.replace(mem_bw=h100.mem_bw).sources["mem_bw"] == datasheet
    assert "mem_efficiency" not in h100.replace(mem_efficiency=None).sources
    # explicit sources win
    assert h100.replace(mem_bw=4e12, sources={"mem_bw": "mine"}).sources == {"mem_bw": "mine"}


def test_equality_includes_block_scaling():
    hw = rs.hardware("b200")
    other = hw.replace(block_scaling=("mx",))
    assert other != hw
    assert hw.replace(block_scaling=("nvfp4", "mx")) == hw
    assert rs.hardware("h100").replace(block_scaling=None) != rs.hardware("h100")


def test_did_you_mean_includes_names_containing_the_query():
    with pytest.raises(rs.devices.UnknownHardwareError, match="did you mean 'H100 SXM'") as info:
        rs.hardware("NVIDIA H100")
    assert "'H100 PCIe'" in str(info.value).split("(known")[0]
    # still no prefix matching
    with pytest.raises(rs.devices.UnknownHardwareError):
        rs.hardware("NVIDIA H100 80GB")


def test_missing_value_hint_names_the_missing_fields():
    b200 = rs.hardware("b200")
    no_fp4 = b200.replace(gemm_efficiency={"bf16": 0.8, "fp8": 0.7})
    with pytest.raises(rs.devices.MissingHardwareValueError) as info:
        rs.linear("nvfp4", mode="inference").on(no_fp4)
    msg = str(info.value)
    assert "has no gemm_efficiency.fp4" in msg
    assert "hw.replace(gemm_efficiency={**hw.gemm_efficiency, 'fp4': ...})" in msg
    assert "'bf16'" not in msg
    assert "(in Python), or add the field to the hardware TOML file" in msg
    rtx = rs.hardware("NVIDIA GeForce RTX 5090", dataset="torchao")
    with pytest.raises(rs.devices.MissingHardwareValueError,
                       match=r"gemm_efficiency=\{'bf16': \.\.\., 'fp8': \.\.\.\}, "
                             r"mem_efficiency=\.\.\.\)"):
        rs.linear("tensorwise", preset="torchao").on(rtx)


def test_efficiencies_only_for_gemm_dtypes():
    with pytest.raises(HardwareError, match=r"field 'gemm_efficiency.int8': efficiencies "
                                            r"are only for GEMM dtypes"):
        rs.Hardware("X", peak_flops={"bf16": 1e15, "int8": 2e15}, mem_bw=1e12,
                    gemm_efficiency={"bf16": 0.8, "int8": 0.7})
    for hw in dataset("default"):
        names = {str(s) for s in hw.stated}
        for name in names:
            # a GEMM dtype's fraction needs its peak; memory, kernels and links have none
            if name.startswith("eta_") and name[4:] not in ("mem", *S.KERNEL_KINDS,
                                                            *S.LINK_SCOPES):
                assert "P_" + name[4:] in names, (hw.name, name)


def test_hardware_symbol_only_for_gemm_dtypes():
    for d in ("bf16", "fp16", "fp8", "fp4"):
        assert S.hardware_symbol(f"P_{d}") is S.peak_flops(d)
        assert S.hardware_symbol(f"eta_{d}") is S.gemm_efficiency(d)
    for name in ("P_anything", "eta_int8", "P_fp32", "P_"):
        with pytest.raises(ValueError, match="bf16, fp16, fp8, fp4"):
            S.hardware_symbol(name)


def test_docs_example_file_loads(tmp_path):
    from pathlib import Path
    text = (Path(__file__).parent.parent / "docs" / "hardware.md").read_text()
    example = text.split("```toml\n", 1)[1].split("```", 1)[0]
    hw = rs.load_hardware(write(tmp_path, example)).get("mine")
    assert hw.block_scaling == ("mx", "nvfp4") and "block_scaling" in hw.sources
    assert hw.sources["l2_bytes"].startswith("derived; ")
    # the optional rate factors, each a hardware symbol the model reads
    assert hw.parameters[S.accumulation_efficiency("fp8")] == sympy.Rational(9, 10)
    assert hw.parameters[S.grouped_efficiency("fp8")] == sympy.Rational(9, 10)


@pytest.mark.parametrize("name", ["b200", "h200", "a100"])
def test_toml_writer_round_trips_every_field(tmp_path, name):
    from roofline_sym.devices.hardware_entry import SOURCED
    from roofline_sym.devices.toml_io import (TOML_FIELDS, hardware_toml, toml_fields,
                                              write_hardware)

    assert tuple(TOML_FIELDS.values()) == SOURCED  # every sourced field has a TOML name
    hw = rs.hardware(name)
    text = hardware_toml(hw, {t: "DS; as shipped" for t in toml_fields(hw)},
                         {"DS": "roofline_sym default dataset"}, dataset="mine")
    (back,) = rs.load_hardware(write_hardware(text, tmp_path / f"{name}.toml")).entries
    assert back.dataset == "mine" and back.parameters == hw.parameters
    for field in ("name", "aliases", "notes", "block_scaling", "memory_bytes", "l2_bytes",
                  "peak_flops"):
        assert getattr(back, field) == getattr(hw, field), field
    assert back.sources["mem_bw"] == "roofline_sym default dataset; as shipped"

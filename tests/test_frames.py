"""Beyond one process: dask arrays stay lazy, a distributed cluster computes
them, sweeps convert to pandas and xarray."""

import pickle

import numpy as np
import pytest

import roofline_sym as rs

da = pytest.importorskip("dask.array")

SHAPES = np.round(np.logspace(10, 17, 20_000, base=2))  # whole layers


@pytest.fixture(scope="module")
def model():
    return rs.linear("mxfp8_cublas", groups=8).on("b200")


def test_evaluate_on_dask_stays_lazy_and_equals_numpy(model):
    lazy = model.evaluate(da.from_array(SHAPES, chunks=2_500), 7168, 2048)
    assert set(lazy) == set(rs.OUTPUTS)
    assert all(isinstance(v, da.Array) for v in lazy.values())
    assert lazy["speedup"].chunks == ((2_500,) * 8,)
    expected = model.evaluate(SHAPES, 7168, 2048)
    for key, value in zip(lazy, da.compute(*lazy.values())):
        np.testing.assert_array_equal(value, expected[key])


def test_dask_broadcasts_with_numpy_and_hardware_axes():
    m = rs.linear("rowwise", preset="torchao")
    hw = m.hardware_axis(["NVIDIA H100", "NVIDIA B200"], ndim=2)
    K = np.array([[1024.0], [4096.0], [8192.0]])
    M = da.from_array(SHAPES[:100], chunks=30)
    lazy = m.evaluate(M, K, 4096, outputs=("speedup", "lowp_time"), **hw)
    assert list(lazy) == ["speedup", "lowp_time"] and lazy["speedup"].shape == (2, 3, 100)
    expected = m.evaluate(SHAPES[:100], K, 4096, **hw)
    np.testing.assert_array_equal(lazy["speedup"].compute(), expected["speedup"])


def test_lazy_values_are_checked_when_computed_and_names_at_once(model):
    bad = model.evaluate(da.from_array(np.array([1024.0, -1.0]), chunks=1), 7168, 2048)
    with pytest.raises(ValueError, match="positive"):
        bad["speedup"].compute()
    with pytest.raises(ValueError, match="free hardware symbols"):
        rs.linear("rowwise").evaluate(da.ones(3), 1, 1)
    with pytest.raises(ValueError, match="unknown output"):
        model.evaluate(da.ones(3), 1, 1, outputs=("nope",))


def test_a_lazy_graph_pickles_and_runs_elsewhere(model):
    # what a process-based cluster does: the graph travels, compiled code does not
    lazy = model.evaluate(da.from_array(SHAPES[:1000], chunks=250), 7168, 2048,
                          outputs=("speedup",))["speedup"]
    again = pickle.loads(pickle.dumps(lazy))
    np.testing.assert_array_equal(again.compute(scheduler="sync"),
                                  model.evaluate(SHAPES[:1000], 7168, 2048)["speedup"])


def test_two_worker_distributed_cluster_equals_numpy(model):
    distributed = pytest.importorskip("dask.distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        lazy = model.evaluate(da.from_array(SHAPES, chunks=2_000), 7168, 2048)
        futures = client.compute(list(lazy.values()))
        got = dict(zip(lazy, client.gather(futures)))
        assert len(client.scheduler_info()["workers"]) == 2
    expected = model.evaluate(SHAPES, 7168, 2048)
    for key in rs.OUTPUTS:
        np.testing.assert_array_equal(got[key], expected[key])


# -- sweeps as tables and arrays ----------------------------------------------------
@pytest.fixture(scope="module")
def result():
    models = rs.model_grid(["rowwise", "mxfp8_cublas"], ["h100", "b200"])
    return rs.sweep(models, ["llama3-8b", "qwen3-30b-a3b"])


def test_to_pandas_round_trips_a_sweep(result):
    pytest.importorskip("pandas")
    df = result.to_pandas()
    assert list(df.columns) == result.columns and len(df) == len(result)
    for column in result.columns:
        assert df[column].tolist() == result[column].tolist(), column


def test_to_xarray_lays_the_sweep_on_gpu_recipe_shape(result):
    pytest.importorskip("xarray")
    ds = result.to_xarray()
    assert ds.speedup.dims == ("gpu", "recipe", "shape")
    assert dict(ds.sizes) == {"gpu": 2, "recipe": 2, "shape": 14}
    assert set(ds.data_vars) == set(rs.OUTPUTS)
    # mxfp8 does not run on an H100: not in the sweep, NaN in the grid
    assert np.isnan(ds.speedup.sel(gpu="H100 SXM", recipe="mxfp8_cublas")).all()
    assert ds.groups.values.max() == 128
    # every row of the sweep is at its place, and nothing else is set
    for row in result.rows:
        at = ds.sel(gpu=row["gpu"], recipe=row["recipe"])
        index = np.flatnonzero((ds.shape_set.values == row["shape_set"])
                               & (ds.name.values == row["name"]))
        (i,) = index
        for key in rs.OUTPUTS:
            assert float(at[key][i]) == row[key]
    assert int(np.isfinite(ds.speedup).sum()) == len(result)


def test_xarray_back_to_a_table(result):
    pytest.importorskip("xarray")
    pytest.importorskip("pandas")
    back = result.to_xarray().to_dataframe().dropna(subset=["speedup"]).reset_index()
    forth = result.to_pandas()
    merged = forth.merge(back, on=["gpu", "recipe", "shape_set", "name"], suffixes=("", "_x"))
    assert len(merged) == len(forth)
    np.testing.assert_array_equal(merged["speedup"], merged["speedup_x"])


def test_netcdf_round_trip(result, tmp_path):
    xr = pytest.importorskip("xarray")
    pytest.importorskip("scipy")
    ds = result.to_xarray()
    ds.to_netcdf(tmp_path / "sweep.nc", engine="scipy")
    with xr.open_dataset(tmp_path / "sweep.nc", engine="scipy") as back:
        np.testing.assert_array_equal(back.speedup.values, ds.speedup.values)
        assert back.name.values.tolist() == ds.name.values.tolist()


def test_to_xarray_adds_a_dimension_for_what_varies_and_refuses_clashes():
    pytest.importorskip("xarray")
    models = [rs.linear("rowwise", fuse=f).on("h100") for f in (False, True)]
    ds = rs.sweep(models, "llama3-8b").to_xarray()
    assert ds.speedup.dims == ("gpu", "recipe", "fuse", "shape")
    twice = rs.sweep([models[0], models[0]], "llama3-8b")
    with pytest.raises(ValueError, match="share"):
        twice.to_xarray()


def test_the_shape_axis_is_labelled_by_set_and_layer(result):
    pytest.importorskip("xarray")
    ds = result.to_xarray()
    assert ds.shape.values[0] == "llama3-8b/self_attn.q_proj"
    for row in result.rows[:20]:
        at = ds.sel(gpu=row["gpu"], recipe=row["recipe"],
                    shape=f"{row['shape_set']}/{row['name']}")
        assert float(at.speedup) == row["speedup"]
    # the same set at two token counts: labels stay unique
    twice = rs.sweep(rs.linear("rowwise").on("h100"), [rs.shape_set("llama3-8b", M=2048),
                                                       rs.shape_set("llama3-8b", M=8192)])
    labels = twice.to_xarray().shape.values.tolist()
    assert len(set(labels)) == len(labels) == 14
    assert labels[0] == "llama3-8b/self_attn.q_proj#0"


def test_the_dask_extra_brings_a_netcdf_writer(result, tmp_path):
    # to_xarray() comes with roofline-sym[dask]; so does a writer for to_netcdf
    # (scipy, netCDF3): the engine xarray picks by itself is one the extra installs
    import re
    from pathlib import Path

    from roofline_sym.devices.toml_io import tomllib

    xr = pytest.importorskip("xarray")
    pytest.importorskip("scipy")
    extras = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())[
        "project"]["optional-dependencies"]["dask"]
    assert "scipy" in {re.split(r"[<>=\[]", e)[0] for e in extras}
    ds = result.to_xarray()
    ds.to_netcdf(tmp_path / "sweep.nc")  # no engine named
    with xr.open_dataset(tmp_path / "sweep.nc") as back:
        np.testing.assert_array_equal(back.speedup.values, ds.speedup.values)
        assert back.shape.values.tolist() == ds.shape.values.tolist()

"""Statistics of every image (run(stats=True), sim.stats()), runs that stop once settled, and the
refusals of meaningless settings, checked against NumPy on the images themselves."""

import numpy as np
import pytest

import grayscott as gs


def plain(x):
    x = np.asarray(x, dtype=np.float64)
    return x.min(), x.max(), x.mean(), x.std()


def test_the_statistics_inside_a_run_match_numpy_on_its_images(tmp_path):
    sim = gs.Simulation(rows=40, cols=48, feed=0.03, kill=0.06, du=0.2, dv=0.1, init="noise",
                        seed=2, backend="cpu")
    seen = []
    previous = [np.asarray(sim.v, dtype=np.float64).copy()]

    def look(index, step, time, image):
        s = sim.stats()
        u = np.asarray(sim.u, dtype=np.float64)
        v = np.asarray(image, dtype=np.float64)
        for name, field in (("u", u), ("v", v)):
            lo, hi, mean, std = plain(field)
            assert s[f"{name}_min"] == lo and s[f"{name}_max"] == hi
            assert s[f"{name}_mean"] == pytest.approx(mean, rel=1e-12, abs=1e-15)
            assert s[f"{name}_std"] == pytest.approx(std, rel=1e-9, abs=1e-12)
        counts, _ = np.histogram(np.clip(v, 0, 0.5 - 1e-9), bins=10, range=(0.0, 0.5))
        assert list(s["histogram"]) == list(counts)
        change = v - previous[0]
        assert s["change_max"] == np.abs(change).max()
        assert s["change_rms_per_step"] == pytest.approx(np.sqrt((change**2).mean()) / step * (index + 1), rel=1e-12)
        previous[0] = v.copy()
        seen.append(index)

    result = sim.run(images=4, steps_per_image=15, output=tmp_path / "s.h5", quiet=True,
                     stats=True, histogram_bins=10, histogram_range=(0.0, 0.5), on_image=look)
    assert seen == [0, 1, 2, 3] and result["completed"] and not result["settled"]
    # Outside a run: measured now, without a change.
    now = sim.stats(bins=4, range=(0.0, 1.0))
    assert np.isnan(now["change_max"]) and sum(now["histogram"]) == 40 * 48
    # The histogram is an array of counts, as the file's (a list had no .sum() or .shape).
    assert now["histogram"].dtype == np.uint64 and now["histogram"].shape == (4,)
    assert now["histogram"].sum() == 40 * 48
    assert now["v_max"] == np.asarray(sim.v).max()


def test_a_run_that_settles_stops_and_says_so(tmp_path):
    sim = gs.Simulation(rows=32, cols=32, feed=0.01, kill=0.09, du=0.2, dv=0.1, backend="cpu")
    result = sim.run(images=200, steps_per_image=20, output=tmp_path / "settle.h5", quiet=True,
                     until_steady=1e-6, steady_images=3)
    assert result["settled"] and not result["completed"]
    assert result["images_written"] < 200
    assert result["status"].startswith(f"settled after image {result['images_written']} ")
    # A file of an earlier grayscott said "settled at image N-1" (counted from 0): as settled.
    import h5py
    with h5py.File(tmp_path / "settle.h5", "r+") as f:
        f.attrs["status"] = result["status"].replace(
            f"settled after image {result['images_written']} ",
            f"settled at image {result['images_written'] - 1} ")
    with pytest.raises(ValueError, match=r"nothing to resume: .* holds a run that settled at image"):
        gs.Simulation.resume(tmp_path / "settle.h5", quiet=True)


def test_a_sweep_takes_the_same_settings(tmp_path):
    result = gs.sweep(tmp_path / "sw.h5", feed=[0.01, 0.03], kill=[0.09, 0.06], rows=24, cols=24,
                      images=5, steps_per_image=10, stats=True, until_steady=1e-6)
    assert result["completed"]


def test_a_sweeps_rate_counts_only_the_members_it_stepped(tmp_path):
    # A settled member is stepped no more: its later images repeat its state and are written, but
    # were never computed, and the rate does not count them.
    import h5py

    rows, cols, images, steps = 32, 32, 12, 200
    result = gs.sweep(tmp_path / "sw.h5", feed="0.01:0.09:4", kill="0.04:0.07:4", rows=rows,
                      cols=cols, images=images, steps_per_image=steps, stats=True,
                      until_steady=1e-5, steady_images=2, quiet=True)
    with h5py.File(tmp_path / "sw.h5") as f:
        settled = f["stats/settled_image"][...]
    assert (settled >= 0).any() and (settled < images - 1).any()
    stepped = sum(int(s) + 1 if s >= 0 else images for s in settled)
    assert stepped < len(settled) * images
    counted = result["cell_updates_per_s"] * result["seconds"]
    assert counted == pytest.approx(stepped * rows * cols * steps, rel=1e-9)


@pytest.mark.parametrize("kwargs, words", [
    (dict(until_steady=-1e-3), "until_steady"),
    (dict(until_steady=float("nan")), "until_steady"),
    (dict(until_steady=1e-13), "below what single precision resolves"),
    (dict(stats=True, histogram_bins=0), "histogram_bins"),
    (dict(stats=True, histogram_range=(1.0, 0.0)), "histogram_range"),
])
def test_meaningless_settings_are_refused_before_anything_runs(tmp_path, kwargs, words):
    sim = gs.Simulation(rows=16, cols=16, backend="cpu")
    with pytest.raises(ValueError, match=words):
        sim.run(images=2, output=tmp_path / "x.h5", quiet=True, **kwargs)
    assert not (tmp_path / "x.h5").exists()


def test_the_file_holds_every_images_statistics_for_xarray(tmp_path):
    import h5py

    path = tmp_path / "f.h5"
    sim = gs.Simulation(rows=24, cols=32, init="noise", seed=1, backend="cpu")
    sim.run(images=5, steps_per_image=8, output=path, quiet=True, stats=True, histogram_bins=12)
    ds = gs.open(path)
    assert ds["v_histogram"].dims == ("time", "v_bin") and ds["v_histogram"].shape == (5, 12)
    assert ds["v_mean"].dims == ("time",)
    with h5py.File(path) as f:
        v = f["v"][...].astype(np.float64)
        assert list(f["stats/v_histogram"].attrs["range"]) == [0.0, 1.0]
    assert np.allclose(ds["v_mean"].values, v.mean(axis=(1, 2)), rtol=1e-12, atol=0)
    assert np.array_equal(ds["v_max"].values, v.max(axis=(1, 2)))
    assert (ds["v_histogram"].sum("v_bin") == 24 * 32).all()
    # The change from image to image, per step.
    rms = np.sqrt(((v[1:] - v[:-1]) ** 2).mean(axis=(1, 2))) / 8
    assert np.allclose(ds["change_rms_per_step"].values[1:], rms, rtol=1e-12)


def test_a_resumed_run_keeps_its_criterion(tmp_path):
    import h5py

    path = tmp_path / "r.h5"
    sim = gs.Simulation(rows=32, cols=32, feed=0.01, kill=0.09, du=0.2, dv=0.1, backend="cpu")

    def stop_early(index, step, time, image):
        if index == 1:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        sim.run(images=200, steps_per_image=20, output=path, quiet=True, until_steady=1e-6,
                steady_images=3, on_image=stop_early)
    resumed = gs.Simulation.resume(path, quiet=True)
    with h5py.File(path) as f:
        status = f.attrs["status"]
        assert f.attrs["until_steady"] == 1e-6 and status.startswith("settled after image ")
        assert f["stats/v_mean"].shape[0] == f["step"].shape[0] < 200
    assert resumed.step == f_step(path)
    # The file is the uninterrupted run's, checkpoint slots included: a settled state is final,
    # and goes into both slots (it went into one, so the slots told when the run had stopped).
    whole = tmp_path / "whole.h5"
    gs.Simulation(rows=32, cols=32, feed=0.01, kill=0.09, du=0.2, dv=0.1, backend="cpu").run(
        images=200, steps_per_image=20, output=whole, quiet=True, until_steady=1e-6,
        steady_images=3)
    with h5py.File(path) as a, h5py.File(whole) as b:
        for name in ("v", "step", "checkpoint/images", "checkpoint/u", "stats/v_mean"):
            assert np.array_equal(a[name][...], b[name][...], equal_nan=True), name
        assert a["checkpoint/images"][0] == a["checkpoint/images"][1] == a["step"].shape[0]


def f_step(path):
    import h5py

    with h5py.File(path) as f:
        return int(f["step"][-1])


def test_classes_in_the_file_match_gs_classify_on_its_images(tmp_path):
    import h5py

    path = tmp_path / "c.h5"
    sim = gs.Simulation(rows=64, cols=64, feed=0.04, kill=0.065, du=0.2, dv=0.1,
                        boundary="periodic", init="noise", seed=4, backend="cpu")
    sim.run(images=4, steps_per_image=500, output=path, quiet=True, classify=True)
    with h5py.File(path) as f:
        classes = f["stats/class"][...]
        names = f["stats/class"].attrs["flag_meanings"].split()
        changes = f["stats/change_rms_per_step"][...]
        images = f["v"][...]
    assert names == list(gs.PATTERN_CLASSES)
    for i in range(4):
        mine = gs.classify(images[i], periodic=True, change_per_step=changes[i])
        assert names[classes[i]] == mine.pattern, i


def test_classify_on_a_grid_too_small_is_refused(tmp_path):
    sim = gs.Simulation(rows=8, cols=64, backend="cpu")
    with pytest.raises(ValueError, match="too small to tell spots from stripes"):
        sim.run(images=2, output=tmp_path / "x.h5", quiet=True, classify=True)


@pytest.mark.parametrize("precision, dtype", [("single", np.float32), ("double", np.float64)])
def test_the_histogram_bins_values_on_its_edges_as_numpy_does(precision, dtype):
    # Edges that are not exact in binary, the values on them and an ulp either side: each counted
    # in the bin numpy.histogram puts it in (its edges in the array's type).
    bins, low, high = 7, 0.1, 0.8
    sim = gs.Simulation(rows=3, cols=8 * 7, backend="cpu", precision=precision)
    edges = np.histogram_bin_edges(np.zeros(1, dtype=dtype), bins=bins, range=(low, high))
    assert edges.dtype == dtype
    on = np.repeat(edges[1:-1], 3).astype(dtype)
    ulp = np.tile([-1, 0, 1], bins - 1)
    values = np.where(ulp < 0, np.nextafter(on, dtype(-1)), np.where(ulp > 0, np.nextafter(on, dtype(2)), on))
    v = np.full((3, 56), (low + high) / 2, dtype=dtype)
    v.flat[:values.size] = values
    sim.v[...] = v
    counts, _ = np.histogram(v, bins=bins, range=(low, high))
    assert list(sim.stats(bins=bins, range=(low, high))["histogram"]) == list(counts)

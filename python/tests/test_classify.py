"""gs.classify: the class and features of any 2D array of v (NumPy of any float or integer type,
lists, a Simulation's own view), periodic or not, with or without the change per step; bad input
refused with one line."""

import math

import numpy as np
import pytest

import grayscott as gs


def discs(n=128, radius=5.0, spacing=16, high=0.3, low=0.0):
    r, c = np.mgrid[0:n, 0:n]
    y = (r % spacing) - spacing / 2
    x = (c % spacing) - spacing / 2
    return np.where(x * x + y * y <= radius * radius, high, low)


def test_classes_and_their_order():
    assert gs.PATTERN_CLASSES == ("decayed", "uniform", "spots", "stripes", "holes", "mixed",
                                  "waves")


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_discs_are_spots_in_any_dtype(dtype):
    v = discs(high=3, low=0).astype(dtype) if dtype is np.int64 else discs().astype(dtype)
    result = gs.classify(v, periodic=True)
    assert result.pattern == "spots"
    assert result == "spots" and str(result) == "spots"
    f = result.features
    assert f["rows"] == 128 and f["cols"] == 128 and f["periodic"] is True
    assert f["objects"]["count"] == 64
    assert f["objects"]["mean_area"] == pytest.approx(math.pi * 25, abs=6)
    assert f["holes"]["count"] == 1
    assert f["change_per_step"] is None
    assert "spots" in repr(result)
    # Counted by name: the object itself (equal to its name, holding a dict) has no hash.
    with pytest.raises(TypeError, match=r"count or key classes by name: c\.pattern"):
        hash(result)


def test_stripes_holes_uniform_decayed_waves():
    c = np.arange(128)
    stripes = np.tile(0.15 + 0.15 * np.sin(2 * np.pi * c / 16), (128, 1))
    assert gs.classify(stripes, periodic=True).pattern == "stripes"
    assert gs.classify(stripes.T.tolist()).pattern == "stripes"  # nested lists, not periodic
    holes = discs(high=0.0, low=0.35)
    assert gs.classify(holes).pattern == "holes"
    assert gs.classify(np.zeros((32, 32))).pattern == "decayed"
    assert gs.classify(np.full((32, 40), 0.25)).pattern == "uniform"
    moving = gs.classify(discs(), change_per_step=1e-3)
    assert moving.pattern == "waves"
    assert moving.features["change_per_step"] == pytest.approx(1e-3)


def test_wrapping_components_count_once_when_periodic():
    v = np.roll(discs(n=64, radius=6, spacing=64), (32, 32), axis=(0, 1))  # centred on a corner
    assert gs.classify(v, periodic=True).features["objects"]["count"] == 1
    framed = gs.classify(v, periodic=False).features["objects"]
    assert framed["count"] == 4 and framed["cut_by_edge"] == 4


def test_change_per_step():
    a = np.full((16, 16), 0.1, np.float32)
    b = np.full((16, 16), 0.4, np.float32)
    assert gs.change_per_step(a, b, 30) == pytest.approx(0.01, rel=1e-6)
    assert gs.change_per_step(a, b.astype(np.float64), 1) == pytest.approx(0.3, rel=1e-6)
    with pytest.raises(ValueError, match="steps"):
        gs.change_per_step(a, b, 0)
    with pytest.raises(ValueError, match="same shape"):
        gs.change_per_step(a, np.zeros((16, 17)), 1)
    with pytest.raises(TypeError, match="steps"):
        gs.change_per_step(a, b, 1.5)


def test_a_simulation_classified_from_its_view():
    # Pearson's lambda point (spots) on a small periodic grid, from several seeds of his kind.
    n = 96
    sim = gs.Simulation(rows=n, cols=n, feed=0.026, kill=0.061, du=0.2097, dv=0.1049,
                        stencil="five-point", boundary="periodic")
    u = np.ones((n, n))
    v = np.zeros((n, n))
    for r, c in [(20, 20), (20, 68), (68, 20), (68, 68)]:
        u[r:r + 12, c:c + 12] = 0.5
        v[r:r + 12, c:c + 12] = 0.25
    sim.u[...] = u
    sim.v[...] = v
    sim.advance(9800)
    before = np.array(sim.v)
    sim.advance(200)
    change = gs.change_per_step(before, sim.v, 200)
    result = gs.classify(sim.v, periodic=True, change_per_step=change)
    assert result.pattern == "spots", result.features


@pytest.mark.parametrize(
    "args, kwargs, error, message",
    [
        ((np.zeros((15, 100)),), {}, ValueError, "too small to tell its pattern"),
        ((np.zeros(300),), {}, ValueError, "expected a 2D array"),
        ((np.full((16, 16), np.nan),), {}, ValueError, "not finite"),
        ((np.zeros((16, 16)),), {"periodic": 1}, TypeError, "periodic"),
        ((np.zeros((16, 16)),), {"change_per_step": "fast"}, TypeError, "change_per_step"),
        ((np.zeros((16, 16)),), {"change_per_step": -1.0}, ValueError, "change_per_step"),
        ((np.array([["a"] * 16] * 16),), {}, TypeError, "numbers"),
    ],
)
def test_bad_input_is_refused_with_one_line(args, kwargs, error, message):
    with pytest.raises(error, match=message) as info:
        gs.classify(*args, **kwargs)
    assert "\n" not in str(info.value)

"""The README's Python example runs as written, on a smaller grid and fewer images (the sizes
are the only text changed), and does what its comments say."""

import re
from pathlib import Path

import numpy as np

README = Path(__file__).resolve().parents[2] / "README.md"


def readme_example():
    text = README.read_text()
    section = text[text.index("### From Python"):]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_the_readme_example_runs(tmp_path, monkeypatch):
    code = readme_example()
    smaller = (code.replace("rows=1080, cols=1920", "rows=108, cols=192")
               .replace("range(1000)", "range(10)").replace("rows=512, cols=512", "rows=51, cols=52")
               .replace("images=100", "images=4"))
    assert smaller != code
    monkeypatch.chdir(tmp_path)
    scope = {}
    exec(compile(smaller, "README.md", "exec"), scope)
    sim, ds = scope["sim"], scope["ds"]
    assert sim.step == 320
    assert np.shares_memory(scope["v"], sim.v)  # taken before the loop, current after it
    assert np.array_equal(scope["v"], sim.v)
    assert ds["v"].dims == ("time", "y", "x") and ds["v"].shape == (4, 51, 52)
    assert sorted(p.name for p in (tmp_path / "pictures").iterdir()) == [
        f"v_{i:04d}.png" for i in range(4)]
    assert (tmp_path / "out.mp4").stat().st_size > 0

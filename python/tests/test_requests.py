"""One request layer: the command line and the Python module take the same settings, with the
same defaults, and refuse the same values with the same one-line message (the setting's name
spelled `--steps-per-image` on one side, `steps_per_image` on the other)."""

import inspect
import math
import re
import subprocess

import pytest

import grayscott as gs
from grayscott import _core

NAMES = _core._setting_names()  # (command-line option, Python keyword)


def anonymous(message: str) -> str:
    """The message with every setting's name, in either spelling, replaced by one placeholder."""
    names = sorted({n for pair in NAMES for n in pair}, key=len, reverse=True)
    pattern = r"(--)?\b(" + "|".join(map(re.escape, names)) + r")\b(=)?"
    anonymous = re.sub(pattern, "<name>", message)
    # A value after its name: `--init noise` on the command line, `init='noise'` in Python.
    anonymous = re.sub(r"<name>'([^']*)'", r"<name> \1", anonymous)
    # The memory available moves between two processes a moment apart.
    return re.sub(r"[0-9.]+ [KMGTPE]?i?B is available", "<bytes> is available", anonymous)


def cli_error(program, *args):
    given = dict(zip(args[::2], args[1::2]))
    options = {"--rows": "8", "--cols": "8", "--images": "1", **given}
    command = [program, "run", "--quiet", "-o", "/tmp/never-written.h5"]
    for option, value in options.items():
        command += [option, value]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0, f"the command line accepted {args}"
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("grayscott: error: "), done.stderr
    return lines[0][len("grayscott: error: "):]


def python_error(kwargs, run_kwargs, exception):
    with pytest.raises(exception) as info:
        sim = gs.Simulation(**{"rows": 8, "cols": 8, **kwargs})
        sim.run(**{"images": 1, "quiet": True, "output": "/tmp/never-written.h5", **run_kwargs})
    message = str(info.value)
    assert "\n" not in message
    return message


# (command-line arguments, Simulation's keywords, run's keywords, Python's exception)
REFUSALS = [
    (["--threads", "100000"], dict(threads=100000), {}, ValueError),
    (["--threads", "-1"], dict(threads=-1), {}, ValueError),
    (["--fuse", "-2"], dict(fuse_steps=-2), {}, ValueError),
    (["--device", "-1"], dict(device=-1), {}, ValueError),
    (["--rows", "0"], dict(rows=0), {}, ValueError),
    (["--cols", "-5"], dict(cols=-5), {}, ValueError),
    (["--feed", "-0.1"], dict(feed=-0.1), {}, ValueError),
    (["--kill", "nan"], dict(kill=math.nan), {}, ValueError),
    (["--du", "inf"], dict(du=math.inf), {}, ValueError),
    (["--dt", "5.5"], dict(dt=5.5), {}, ValueError),
    (["--stencil", "five-point", "--dt", "3"], dict(stencil="five-point", dt=3), {}, ValueError),
    (["--stencil", "1,1,1,1,0,1,1,1"], dict(stencil="1,1,1,1,0,1,1,1"), {}, ValueError),
    (["--stencil", "-1,1,-1,1,0,1,-1,1,-1"], dict(stencil="-1,1,-1,1,0,1,-1,1,-1"), {}, ValueError),
    (["--boundary", "open"], dict(boundary="open"), {}, ValueError),
    (["--precision", "half"], dict(precision="half"), {}, ValueError),
    (["--init", "stripes"], dict(init="stripes"), {}, ValueError),
    (["--backend", "gpu"], dict(backend="gpu"), {}, ValueError),
    (["--seed", "4"], dict(seed=4), {}, ValueError),
    (["--init", "noise", "--seed", "-1"], dict(init="noise", seed=-1), {}, ValueError),
    (["--images", "0"], {}, dict(images=0), ValueError),
    (["--steps-per-image", "-1"], {}, dict(steps_per_image=-1), ValueError),
    (["--fields", "w"], {}, dict(fields="w"), ValueError),
    (["--checkpoint-every", "soon"], {}, dict(checkpoint_every="soon"), ValueError),
    (["--rows", "100000", "--cols", "1000000"], dict(rows=100000, cols=1000000), {}, MemoryError),
    (["--pattern", "zebra"], dict(pattern="zebra"), {}, ValueError),
    (["--preset", "course-fortran"], dict(preset="course-fortran"), {}, ValueError),
    (["--boundary", "fixed", "--outside", "nan,0"], dict(boundary="fixed", outside=(math.nan, 0)),
     {}, ValueError),
    (["--init", "drop", "--init-values", "0,inf"], dict(init="drop", init_values=(0, math.inf)), {},
     ValueError),
    (["--init", "box", "--rows", "6"], dict(init="box", rows=6), {}, ValueError),
    # Values that nothing would use are refused, not ignored.
    (["--outside", "0.5,0.5"], dict(outside=(0.5, 0.5)), {}, ValueError),
    (["--histogram-bins", "0"], {}, dict(histogram_bins=0), ValueError),
    (["--histogram-range", "1,0"], {}, dict(histogram_range=(1, 0)), ValueError),
    (["--steady-images", "0"], {}, dict(steady_images=0), ValueError),
    (["--backend", "cpu", "--device", "3"], dict(backend="cpu", device=3), {}, ValueError),
]


@pytest.mark.parametrize("cli, kwargs, run_kwargs, exception", REFUSALS,
                         ids=[" ".join(r[0]) for r in REFUSALS])
def test_both_front_ends_refuse_the_same_values_with_the_same_message(
        grayscott_bin, cli, kwargs, run_kwargs, exception):
    from_cli = cli_error(grayscott_bin, *cli)
    from_python = python_error(kwargs, run_kwargs, exception)
    assert anonymous(from_cli) == anonymous(from_python), (from_cli, from_python)
    # Each speaks its own language: no option syntax in Python, no keyword syntax on the line.
    assert not re.search(r"--[a-z]", from_python), from_python
    for option, keyword in NAMES:
        if option != keyword and re.search(rf"\b{re.escape(option)}\b", from_cli):
            assert not re.search(rf"\b{re.escape(option)}\b", from_python), from_python


@pytest.mark.parametrize("feed, kill", [
    ([0.02, 0.9], [0.06]), ([0.9, 0.02], [0.06]), ([0.02], [0.06, 0.5]), ([0.02], [0.5, 0.06])])
def test_every_sweep_refuses_a_member_past_its_stability_limit_wherever_it_stands(
        grayscott_bin, tmp_path, feed, kill):
    # Each member's feed and kill move its limit: the member past it is named, first or not.
    bad = (max(feed), max(kill))
    command = [grayscott_bin, "sweep", "--rows", "16", "--cols", "16", "--images", "1", "--dt",
               "4.7", "--feed", ",".join(map(str, feed)), "--kill", ",".join(map(str, kill)),
               "--quiet", "-o", str(tmp_path / "never.h5")]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "exceeds the explicit-Euler stability limit" in done.stderr
    expected = f"feed {bad[0]:g} and kill {bad[1]:g}"
    assert expected in done.stderr, done.stderr
    with pytest.raises(ValueError, match=expected):
        gs.Sweep(feed=feed, kill=kill, rows=16, cols=16, dt=4.7)
    with pytest.raises(ValueError, match=expected):
        gs.sweep(tmp_path / "never.h5", feed=feed, kill=kill, rows=16, cols=16, images=1, dt=4.7,
                 quiet=True)
    assert not (tmp_path / "never.h5").exists()


def test_the_signatures_carry_the_command_lines_defaults():
    defaults = _core._defaults("simulation")
    parameters = dict(inspect.signature(gs.Simulation).parameters)
    # Where the grid lives (MPI) and how it is split there: the command line's options under
    # mpirun.
    parameters.pop("comm")
    defaults.update(_core._defaults("over_ranks"))
    assert set(parameters) == set(defaults)
    for name, parameter in parameters.items():
        assert parameter.default == defaults[name], name
    run_defaults = _core._defaults("run")
    run_parameters = inspect.signature(gs.Simulation.run).parameters
    for name, default in run_defaults.items():
        assert run_parameters[name].default == default, name
    sweep_defaults = _core._defaults("sweep")
    for name, parameter in inspect.signature(gs.sweep).parameters.items():
        if name in sweep_defaults and name not in ("init", "quiet"):
            assert parameter.default == sweep_defaults[name], name


def test_a_sweep_takes_one_seed_for_every_member_as_the_command_line(grayscott_bin, tmp_path):
    common = dict(feed=[0.02, 0.03], rows=16, cols=16, images=2, init="noise", quiet=True)
    gs.sweep(tmp_path / "seed.h5", seed=4, **common)
    gs.sweep(tmp_path / "seeds.h5", seeds=[4], **common)
    subprocess.run([grayscott_bin, "sweep", "--feed", "0.02,0.03", "--rows", "16", "--cols", "16",
                    "--images", "2", "--init", "noise", "--seed", "4", "-o",
                    str(tmp_path / "cli.h5"), "--quiet"], check=True, timeout=60)
    import h5py

    files = [h5py.File(tmp_path / name) for name in ("seed.h5", "seeds.h5", "cli.h5")]
    assert all((f["v"][...] == files[0]["v"][...]).all() for f in files)
    assert gs.Sweep(feed=[0.02], rows=16, cols=16, init="noise", seed=4).members == [(0.02, 0.054,
                                                                                       4)]
    with pytest.raises(ValueError, match="^seeds: give seed= or seeds=, not both$"):
        gs.Sweep(feed=[0.02], rows=16, cols=16, init="noise", seed=4, seeds=[1, 2])


def test_the_signature_in_docs_python_md_is_simulations():
    import ast
    import pathlib

    text = (pathlib.Path(__file__).parents[2] / "docs" / "python.md").read_text()
    block = text.split("## Simulation\n", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    call = ast.parse(block).body[0].value
    documented = [(k.arg, ast.literal_eval(k.value)) for k in call.keywords]
    actual = [(name, p.default) for name, p in inspect.signature(gs.Simulation).parameters.items()]
    assert documented == actual


def test_the_defaults_are_the_command_lines(grayscott_bin):
    printed = subprocess.run([grayscott_bin, "run", "--print-config"], capture_output=True,
                             text=True, check=True, timeout=60).stdout
    # Options not given are printed as comments with their defaults.
    values = dict(line.removeprefix("# ").split(" = ", 1) for line in printed.splitlines()[1:]
                  if " = " in line)
    keyword = dict(NAMES)
    defaults = {**_core._defaults("simulation"), **_core._defaults("run"),
                **_core._defaults("over_ranks")}
    for option, text in values.items():
        if option not in keyword:
            continue  # the command line's own (config, resume)
        value = defaults[keyword[option]]
        if isinstance(value, bool):
            assert text == str(value).lower(), option
        elif isinstance(value, str):
            assert text == f'"{value}"', option
        else:
            assert float(text) == value, option


@pytest.mark.parametrize("kwargs, named", [
    (dict(rows="128"), "rows"), (dict(cols=12.0), "cols"), (dict(feed="0.01"), "feed"),
    (dict(stencil=5), "stencil"), (dict(threads=True), "threads"), (dict(seed=1.5), "seed"),
])
def test_wrong_types_name_the_argument(kwargs, named):
    with pytest.raises(TypeError, match=rf"^{named}: expected"):
        gs.Simulation(**{"rows": 8, "cols": 8, **kwargs})


def test_a_grid_too_big_for_memory_names_what_it_needs_and_what_there_is():
    with pytest.raises(MemoryError, match=r"needs [0-9.]+ [KMGTPE]iB of host memory, and [0-9.]+ [KMGTPE]?i?B is available"):
        gs.Simulation(rows=10**9, cols=10**6)

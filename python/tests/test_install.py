"""`pip install .` installs the whole tool: the module with its stub and py.typed, and the
`grayscott` program beside the environment's Python."""

import inspect
import subprocess
import sys
from pathlib import Path

import grayscott as gs


def test_the_program_is_installed_beside_python():
    program = Path(sys.executable).parent / "grayscott"
    assert program.exists(), f"pip install . put no grayscott program in {program.parent}"
    done = subprocess.run([str(program), "--version"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == f"grayscott {gs.__version__}"


def test_the_module_has_its_stub_and_says_it_is_typed():
    package = Path(gs.__file__).parent
    assert (package / "py.typed").exists()
    stub = (package / "_core.pyi").read_text()
    for signature in ("class _Simulation(_Batch):", "def _advance(self, steps: int) -> None",
                      "def feed(self) -> float"):
        assert signature in stub, signature


def test_every_public_function_has_a_signature_and_a_docstring():
    for name in gs.__all__:
        thing = getattr(gs, name)
        if callable(thing):
            assert thing.__doc__, name
            inspect.signature(thing)  # raises for a builtin without one
    # What tab completion offers is the package's own: no name a __future__ import binds.
    assert "annotations" not in dir(gs)

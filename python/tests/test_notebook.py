"""The example notebooks run headless, start to end, on small grids: they never rot. They name the
kernel that scripts/python-package registers ("Python (grayscott)"), so they run out of the box."""

import json
import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

FOLDER = Path(__file__).resolve().parents[2] / "examples" / "notebook"
NOTEBOOK = FOLDER / "gray-scott.ipynb"


def test_the_notebooks_name_the_kernel_that_the_set_up_registers():
    from jupyter_client.kernelspec import KernelSpecManager

    for path in FOLDER.glob("*.ipynb"):
        assert nbformat.read(path, as_version=4).metadata.kernelspec.name == "grayscott", path
    spec = KernelSpecManager().get_kernel_spec("grayscott")  # scripts/python-package installs it
    python = spec.argv[0]
    import subprocess

    done = subprocess.run([python, "-c", "import grayscott, tqdm"], capture_output=True, text=True)
    assert done.returncode == 0, f"the grayscott kernel's Python ({python}) cannot import grayscott"


def execute(path, tmp_path, monkeypatch):
    """The notebook run by this Python, under the kernel name it asks for."""
    monkeypatch.setenv("GRAYSCOTT_NOTEBOOK_SMALL", "1")
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    monkeypatch.setenv("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    # The kernel is this Python, the one with grayscott installed, whatever kernels are installed.
    spec = tmp_path / "jupyter" / "kernels" / "grayscott"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-Xfrozen_modules=off", "-m", "ipykernel_launcher", "-f",
                 "{connection_file}"],
        "display_name": "grayscott tests", "language": "python"}))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    # The kernel's temporary files go here: what the notebook writes there must be gone once the
    # kernel stops (a course-size run leaves hundreds of megabytes otherwise).
    temporary = tmp_path / "temporary"
    temporary.mkdir()
    monkeypatch.setenv("TMPDIR", str(temporary))
    notebook = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(notebook, timeout=300,
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()  # stops the kernel at the end
    left = sorted(str(p.relative_to(temporary)) for p in temporary.rglob("*") if p.is_file())
    assert not [p for p in left if p.endswith((".h5", ".xmf", ".png", ".mp4"))], \
        f"{path.name} left its files in the temporary folder: {left}"
    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    return outputs


def test_the_example_notebook_runs(tmp_path, monkeypatch):
    outputs = execute(NOTEBOOK, tmp_path, monkeypatch)
    pictures = [o for o in outputs if o.output_type == "display_data" and "image/png" in o.data]
    assert len(pictures) >= 3, "the notebook shows a picture, an atlas and the file's last image"
    text = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert "largest difference from NumPy" in text and "complete" in text


def test_the_four_lessons_notebook_runs(tmp_path, monkeypatch, grayscott_bin):
    monkeypatch.setenv("GRAYSCOTT_BIN", grayscott_bin)
    outputs = execute(FOLDER / "four-lessons.ipynb", tmp_path, monkeypatch)
    text = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    for lesson in ("residency:", "specialised: grayscott's 3x3 kernel", "fused:", "batched:",
                   "ranks:"):
        assert lesson in text, lesson

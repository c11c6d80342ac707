"""The example notebook runs headless, start to end, on a small grid: it never rots."""

import json
import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

NOTEBOOK = Path(__file__).resolve().parents[2] / "examples" / "notebook" / "gray-scott.ipynb"


def test_the_example_notebook_runs(tmp_path, monkeypatch):
    monkeypatch.setenv("GRAYSCOTT_NOTEBOOK_SMALL", "1")
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    monkeypatch.setenv("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    # The kernel is this Python, the one with grayscott installed, whatever kernels are installed.
    spec = tmp_path / "jupyter" / "kernels" / "grayscott-test"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-Xfrozen_modules=off", "-m", "ipykernel_launcher", "-f",
                 "{connection_file}"],
        "display_name": "grayscott tests", "language": "python"}))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    client = nbclient.NotebookClient(notebook, timeout=300, kernel_name="grayscott-test",
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    pictures = [o for o in outputs if o.output_type == "display_data" and "image/png" in o.data]
    assert len(pictures) >= 3, "the notebook shows a picture, an atlas and the file's last image"
    text = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert "largest difference from NumPy" in text and "complete" in text

"""The peers that run in this Python: grayscott's own module loop and JAX's versions on the CPU,
each checked against grayscott before anything is timed (bench/peers/common.py)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

PEERS = Path(__file__).resolve().parents[2] / "bench" / "peers"


def check(script, *args):
    done = subprocess.run([sys.executable, str(PEERS / script), *args, "--check-only", "--json"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr + done.stdout
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_module_peer_agrees_with_grayscott():
    assert check("grayscott_peer.py")["check_error"] == 0.0
    assert check("grayscott_peer.py", "--batch", "3")["check_error"] == 0.0


@pytest.mark.parametrize("variant", ["conv", "stencil", "vmap"])
def test_the_jax_cpu_peers_agree_with_grayscott(variant):
    try:
        import jax  # noqa: F401
    except ImportError as error:
        pytest.fail(f"JAX is missing ({error}): scripts/python-package installs it")
    assert check("jax_peer.py", "--variant", variant, "--cpu")["check_error"] <= 1e-5


@pytest.mark.parametrize("boundary", ["zero-flux", "periodic"])
def test_the_volume_peers_agree_with_grayscott(grayscott_bin, boundary):
    done = subprocess.run([sys.executable, str(PEERS / "volume_peers.py"), "--grayscott",
                           str(grayscott_bin), "--boundary", boundary, "--check-only", "--json"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr + done.stdout
    results = [json.loads(line) for line in done.stdout.strip().splitlines()]
    assert [r["peer"] for r in results] == ["numpy", "jax"]
    assert all(r["check_error"] <= 1e-5 for r in results)


def test_a_timed_module_run_reports_its_workload():
    done = subprocess.run([sys.executable, str(PEERS / "grayscott_peer.py"), "--rows", "64",
                           "--cols", "64", "--images", "3", "--steps-per-image", "4", "--json"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["images"] == 3 and result["cell_updates_per_s"] > 0

"""On a GPU: the state stays in device memory and CuPy, PyTorch and JAX take it without a copy.
Skipped, with the reason, where no CUDA device is usable (or the package was built without CUDA)."""

import numpy as np
import pytest

import grayscott as gs


def _cuda_simulation(**kwargs):
    try:
        return gs.Simulation(backend="cuda", **kwargs)
    except (RuntimeError, ValueError) as error:
        pytest.skip(f"no usable CUDA device: {error}")


def test_state_is_a_device_array_bitwise_the_cpu_engine():
    gpu = _cuda_simulation(rows=130, cols=150)
    assert gpu.on_device and isinstance(gpu.v, gs.DeviceArray)
    cpu = gs.Simulation(rows=130, cols=150, backend="cpu")
    gpu.advance(100)
    cpu.advance(100)
    assert np.array_equal(np.asarray(gpu.v), cpu.v)
    assert np.array_equal(np.asarray(gpu.u), cpu.u)


def test_cuda_array_interface_points_at_the_engine_state():
    sim = _cuda_simulation(rows=64, cols=64)
    a, b = sim.v.__cuda_array_interface__, sim.v.__cuda_array_interface__
    assert a["data"][0] == b["data"][0] and a["shape"] == (64, 64) and a["typestr"] == "<f4"


def test_cupy_views_without_a_copy_and_writes_through():
    cupy = pytest.importorskip("cupy")
    sim = _cuda_simulation(rows=64, cols=64)
    view = cupy.from_dlpack(sim.v)
    assert view.data.ptr == sim.v.__cuda_array_interface__["data"][0]
    view[0:4, 0:4] = 0.5
    assert np.asarray(sim.v)[2, 2] == np.float32(0.5)
    assert cupy.asarray(sim.v).data.ptr == view.data.ptr


def test_torch_views_without_a_copy():
    torch = pytest.importorskip("torch")
    sim = _cuda_simulation(rows=64, cols=64)
    tensor = torch.from_dlpack(sim.v)
    assert tensor.is_cuda and tensor.data_ptr() == sim.v.__cuda_array_interface__["data"][0]


def test_jax_views_without_a_copy():
    jax = pytest.importorskip("jax")
    sim = _cuda_simulation(rows=64, cols=64)
    array = jax.dlpack.from_dlpack(sim.v)
    assert array.unsafe_buffer_pointer() == sim.v.__cuda_array_interface__["data"][0]


def test_one_view_serves_every_consumer_and_keeps_its_memory():
    # Each __dlpack__ call makes a fresh capsule (a capsule is consumed once), over the memory the
    # view was taken over, also after later advances.
    cupy = pytest.importorskip("cupy")
    sim = _cuda_simulation(rows=64, cols=64)
    view = sim.v
    pointer = view.__cuda_array_interface__["data"][0]
    assert view.__dlpack_device__() == (2, 0)  # kDLCUDA, device 0
    first, second = cupy.from_dlpack(view), cupy.from_dlpack(view)
    assert first.data.ptr == second.data.ptr == pointer
    sim.advance(1)
    assert cupy.from_dlpack(view).data.ptr == pointer
    assert sim.v.__cuda_array_interface__["data"][0] != pointer  # the engine moved to its other buffer


def test_a_consumers_write_on_its_own_stream_comes_before_the_next_advance():
    cupy = pytest.importorskip("cupy")
    sim = _cuda_simulation(rows=256, cols=256)
    reference = gs.Simulation(rows=256, cols=256, backend="cpu")
    reference.v[100:140, 100:140] = 0.25
    reference.advance(50)
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        view = cupy.from_dlpack(sim.v)  # CuPy passes this stream to __dlpack__
        view[100:140, 100:140] = 0.25  # queued on the consumer's stream, not waited for here
    sim.advance(50)
    assert np.array_equal(np.asarray(sim.v), reference.v)

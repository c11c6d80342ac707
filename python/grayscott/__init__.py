"""grayscott: the Gray-Scott reaction-diffusion engine from Python.

The state lives where the engine keeps it (host memory for the CPU backend, device memory for
CUDA) from the first step to the last; Python sees it through views, never copies::

    import grayscott as gs
    sim = gs.Simulation(rows=1080, cols=1920)
    sim.advance(32)            # 32 steps, fused on the engine, the GIL released
    v = sim.v                  # the current state: a NumPy array over the engine's memory (CPU)
    sim.run(images=100, steps_per_image=32, output="out.h5")   # the pipeline of `grayscott run`
    ds = gs.open("out.h5")     # an xarray.Dataset

See docs/python.md for the whole API.
"""

from __future__ import annotations

import datetime as _datetime
import os as _os
import sys as _sys
import time as _time

from . import _core

__version__ = _core.__version__

__all__ = ["Simulation", "Sweep", "DeviceArray", "open", "sweep", "dt_limit", "__version__"]


def dt_limit(stencil: str = "oono-puri", du: float = 0.1, dv: float = 0.05) -> float:
    """The largest stable explicit-Euler time step for this stencil and these diffusion rates."""
    return _core._dt_limit(stencil, du, dv)


_DLPACK_CUDA = 2  # DLDeviceType kDLCUDA


class DeviceArray:
    """A field in GPU memory, as CuPy, PyTorch and JAX take it without a copy.

    ``cupy.from_dlpack(a)``, ``torch.from_dlpack(a)`` and ``jax.dlpack.from_dlpack(a)`` use
    ``__dlpack__``; ``cupy.asarray(a)`` and Numba use ``__cuda_array_interface__``;
    ``numpy.asarray(a)`` makes one device-to-host copy.
    """

    __slots__ = ("_owner", "_field", "_interface")

    def __init__(self, owner, field: str):
        self._owner = owner  # keeps the engine, hence the memory, alive
        self._field = field
        self._interface = owner._field_interface(field)

    @property
    def shape(self):
        return tuple(self._interface["shape"])

    @property
    def dtype(self):
        import numpy

        return numpy.dtype(self._interface["typestr"])

    @property
    def __cuda_array_interface__(self):
        return {
            "shape": self.shape,
            "typestr": self._interface["typestr"],
            "data": (self._interface["pointer"], False),
            "strides": None,  # C-contiguous
            "version": 3,
            # The engine has finished every step queued before this view was taken.
            "stream": None,
        }

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        # Making the capsule waits for every step queued so far on the engine's stream (as taking
        # the view did), so any consumer stream may read it at once: `stream` needs no event. The
        # capsule is DLPack's unversioned one, which consumers asking for max_version still take.
        if dl_device is not None and tuple(dl_device) != self.__dlpack_device__():
            raise BufferError(f"this array lives on {self.__dlpack_device__()}, not {tuple(dl_device)}")
        if copy:
            raise BufferError("a DeviceArray is exported without a copy; copy it in the consumer")
        return self._owner._device_capsule(self._field, self._interface["pointer"])

    def __dlpack_device__(self):
        return (_DLPACK_CUDA, self._interface["device"])

    def __array__(self, dtype=None, copy=None):
        host = self._owner._copy_field(self._field)
        return host if dtype is None else host.astype(dtype)

    def __repr__(self):
        return f"DeviceArray(shape={self.shape}, dtype={self.dtype}, device={self._interface['device']})"


def _view(owner, field: str):
    if owner._on_device:
        return DeviceArray(owner, field)
    return owner._field(field)


class _Progress:
    """A progress bar for run(): a line on a terminal's stderr, or a line updated in a notebook."""

    def __init__(self, label: str):
        self.label = label
        self.start = _time.monotonic()
        self.last = 0.0
        self.handle = None
        self.notebook = _in_notebook()

    def __call__(self, done: int, total: int):
        now = _time.monotonic()
        if done < total and now - self.last < 0.2:
            return
        self.last = now
        width = 30
        filled = width * done // max(total, 1)
        elapsed = now - self.start
        line = f"{self.label} [{'#' * filled}{'.' * (width - filled)}] {done}/{total} images, {elapsed:.1f} s"
        if self.notebook:
            from IPython.display import display

            if self.handle is None:
                self.handle = display({"text/plain": line}, raw=True, display_id=True)
            else:
                self.handle.update({"text/plain": line}, raw=True)
        else:
            end = "\n" if done >= total else ""
            print("\r" + line, end=end, file=_sys.stderr, flush=True)


def _in_notebook() -> bool:
    shell = _sys.modules.get("IPython")
    if shell is None:
        return False
    try:
        ip = shell.get_ipython()
    except AttributeError:
        return False
    return ip is not None and type(ip).__name__ == "ZMQInteractiveShell"


def _default_progress(quiet: bool, label: str):
    if quiet:
        return None
    if _in_notebook() or _sys.stderr.isatty():
        return _Progress(label)
    return None


def _checkpoint_every(value) -> tuple[int, float]:
    """(images, seconds) from 25, 90.0 (seconds), a timedelta, or '25', '90s', '10m', '1h'."""
    if isinstance(value, bool):
        raise TypeError("checkpoint_every: expected images (int), a time or a string like '10m'")
    if isinstance(value, int):
        if value <= 0:
            raise ValueError("checkpoint-every must be positive")
        return value, 0.0
    if isinstance(value, _datetime.timedelta):
        value = value.total_seconds()
    if isinstance(value, float):
        if not value > 0:
            raise ValueError("checkpoint-every must be positive")
        return 0, value
    if isinstance(value, str):
        return _core._parse_checkpoint_every(value)
    raise TypeError("checkpoint_every: expected images (int), a time or a string like '10m'")


class Simulation(_core._Simulation):
    """One Gray-Scott simulation whose state stays on its engine.

    The arguments mean what the command line's options of the same names mean (``grayscott run
    --help``). ``stencil`` is a name ("oono-puri", "pretty", "five-point") or nine
    comma-separated weights; ``boundary`` is "zero-flux", "periodic" or "fixed"; ``precision``
    "single" or "double"; ``backend`` "auto", "cpu" or "cuda"; ``init`` "rectangle" or "noise"
    (with ``seed``). ``threads`` (CPU) defaults to OpenMP's choice, ``fuse_steps`` (steps per pass
    over the grid) to the engine's.

    Bad input raises ValueError with the command line's one-line message.
    """

    def __init__(
        self,
        rows: int = 1080,
        cols: int = 1920,
        feed: float = 0.014,
        kill: float = 0.054,
        du: float = 0.1,
        dv: float = 0.05,
        dt: float = 1.0,
        stencil: str = "oono-puri",
        boundary: str = "zero-flux",
        precision: str = "single",
        backend: str = "auto",
        init: str = "rectangle",
        seed: int = 0,
        threads: int | None = None,
        fuse_steps: int = 0,
        device: int = 0,
    ):
        super().__init__(
            rows, cols, feed, kill, du, dv, dt, stencil, boundary, precision, backend, init, seed,
            threads, fuse_steps, device,
        )
        self._on_device = self.on_device

    @property
    def u(self):
        """The current u, without a copy (see `v`)."""
        return _view(self, "u")

    @property
    def v(self):
        """The current v, without a copy.

        On the CPU a NumPy array over the engine's memory; on a GPU a DeviceArray. A write
        through it is the state the next advance starts from. The engine steps between two
        buffers, so after an advance take ``sim.v`` again: an older view shows a buffer the engine
        reuses (the state of an earlier step, or one being overwritten), never freed memory.
        """
        return _view(self, "v")

    def run(
        self,
        images: int = 1000,
        steps_per_image: int = 32,
        output: str | _os.PathLike = "output.h5",
        fields: str = "v",
        overwrite: bool = False,
        checkpoint_every="5m",
        progress=None,
        quiet: bool = False,
    ) -> dict:
        """Run the pipeline of ``grayscott run`` on this simulation: ``images`` images of
        ``steps_per_image`` steps each, written to ``output`` (the same file as the command
        line's), from the initial state (the simulation must be at step 0: see ``reset``).

        The simulation holds the last state afterwards. Ctrl-C stops the run at the next image
        boundary: the file keeps every image and a checkpoint, and KeyboardInterrupt says how to
        continue (``Simulation.resume(output)``). ``progress`` is a callable ``(done, total)``;
        by default a bar is drawn in a terminal or a notebook unless ``quiet``. Returns a summary
        (images written, seconds, cell updates per second, status).
        """
        every_images, every_seconds = _checkpoint_every(checkpoint_every)
        if progress is None:
            progress = _default_progress(quiet, _os.fspath(output))
        return self._run(
            images, steps_per_image, _os.fspath(output), fields, overwrite, quiet, every_images,
            every_seconds, progress, False,
        )

    @classmethod
    def resume(cls, path, backend: str = "auto", threads: int | None = None, progress=None,
               quiet: bool = False, checkpoint_every="5m") -> "Simulation":
        """Continue the unfinished run in ``path`` from its newest checkpoint to its end, as
        ``grayscott run --resume`` does, and return the simulation holding its final state.
        The parameters come from the file."""
        path = _os.fspath(path)
        parameters = _core._resumable_run(path)
        sim = cls(
            rows=parameters["rows"], cols=parameters["cols"], feed=parameters["feed"],
            kill=parameters["kill"], du=parameters["du"], dv=parameters["dv"],
            dt=parameters["dt"], stencil=parameters["stencil"], boundary=parameters["boundary"],
            precision=parameters["precision"], backend=backend, init=parameters["init"],
            seed=parameters["seed"], threads=threads,
        )
        every_images, every_seconds = _checkpoint_every(checkpoint_every)
        if progress is None:
            progress = _default_progress(quiet, path)
        sim._run(0, 0, path, "v", False, quiet, every_images, every_seconds, progress, True)
        return sim

    def __repr__(self):
        p = self.parameters
        return (
            f"Simulation(rows={p['rows']}, cols={p['cols']}, feed={p['feed']}, kill={p['kill']}, "
            f"precision={p['precision']!r}, backend={self.backend!r}, step={self.step})"
        )


def _seed_list(seeds):
    if seeds is None:
        return [0]
    if isinstance(seeds, int):
        return [seeds]
    return list(seeds)


def _float_list(name, values):
    if isinstance(values, (int, float)):
        return [float(values)]
    values = [float(x) for x in values]
    if not values:
        raise ValueError(f"{name}: give at least one value")
    return values


class Sweep(_core._Sweep):
    """Many simulations stepped together in one engine (JAX's ``vmap``): every combination of
    ``feed``, ``kill`` and ``seeds`` (kill varying fastest, then feed, then seed), sharing the
    grid, diffusion rates, stencil, boundary and precision.

    ``u`` and ``v`` have shape (members, rows, cols) and are views, as for Simulation. With
    ``seeds`` the members start from the rectangle with noise (``init="noise"``), one seed each.
    """

    def __init__(
        self,
        feed=0.014,
        kill=0.054,
        seeds=None,
        rows: int = 128,
        cols: int = 128,
        du: float = 0.1,
        dv: float = 0.05,
        dt: float = 1.0,
        stencil: str = "oono-puri",
        boundary: str = "zero-flux",
        precision: str = "single",
        backend: str = "auto",
        init: str | None = None,
        threads: int | None = None,
        fuse_steps: int = 0,
        device: int = 0,
    ):
        if init is None:
            init = "rectangle" if seeds is None else "noise"
        super().__init__(
            _float_list("feed", feed), _float_list("kill", kill), _seed_list(seeds), rows, cols,
            du, dv, dt, stencil, boundary, precision, backend, init, threads, fuse_steps, device,
        )
        self._on_device = self.on_device

    @property
    def u(self):
        """Every member's current u, shape (members, rows, cols), without a copy."""
        return _view(self, "u")

    @property
    def v(self):
        """Every member's current v, shape (members, rows, cols), without a copy."""
        return _view(self, "v")

    def __len__(self):
        return len(self.members)

    def __repr__(self):
        p = self.parameters
        return f"Sweep({len(self)} members of {p['rows']}x{p['cols']}, backend={self.backend!r}, step={self.step})"


def sweep(
    output,
    feed=0.014,
    kill=0.054,
    seeds=None,
    rows: int = 128,
    cols: int = 128,
    images: int = 100,
    steps_per_image: int = 32,
    du: float = 0.1,
    dv: float = 0.05,
    dt: float = 1.0,
    stencil: str = "oono-puri",
    boundary: str = "zero-flux",
    precision: str = "single",
    init: str | None = None,
    overwrite: bool = False,
    quiet: bool = True,
    backend: str = "auto",
    threads: int | None = None,
) -> dict:
    """Write a sweep to ``output`` through the pipeline of ``grayscott sweep`` (batches that fit
    in memory, the same file). Ctrl-C stops it at an image boundary with its checkpoints saved;
    ``grayscott sweep --resume output`` continues it."""
    if init is None:
        init = "rectangle" if seeds is None else "noise"
    return _core._sweep_to_file(
        _float_list("feed", feed), _float_list("kill", kill), _seed_list(seeds), rows, cols, du, dv,
        dt, stencil, boundary, precision, init, images, steps_per_image, _os.fspath(output),
        overwrite, quiet, backend, threads,
    )


def open(path, **kwargs):  # noqa: A001 - the name users expect, as xarray.open_dataset
    """The run or sweep file ``path`` as an xarray.Dataset, read lazily.

    A run's fields have dims (time, y, x), with coordinates ``step`` and ``time`` (step * dt);
    the file's attributes (rates, grid, stencil, status) become the dataset's. Needs xarray and
    h5netcdf. Extra keyword arguments go to xarray.open_dataset.
    """
    from ._files import open_dataset

    return open_dataset(_os.fspath(path), **kwargs)

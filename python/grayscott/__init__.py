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

import atexit as _atexit
import contextlib as _contextlib
import contextvars as _contextvars
import functools as _functools
import inspect as _inspect
import os as _os
import sys as _sys
import threading as _threading
import time as _time

from . import _core

__version__ = _core.__version__

# The HDF5 library this package is built with is not thread-safe: two files written or read at
# once from two threads corrupt its caches ("ring type mismatch", a crash). Runs, sweeps and
# renderings of one process take turns (a second thread's waits, without the GIL, for the
# first's to end); the same thread may nest them (a video made from an on_image callback).
_FILE_WORK = _threading.RLock()


def _stop_work_at_exit():
    """A run (sweep, render) still going on in another thread when the interpreter exits stops at
    its next image, its file continuable, before the interpreter ends that thread. Every other
    thread is then stopped, or held at its next call into the module, perhaps with the turn in
    hand (between taking it and starting its run): the exit's own later handlers take turns
    anew."""
    global _FILE_WORK
    if _core._stop_work_at_exit():  # else work goes on in another thread, with the turn
        _FILE_WORK = _threading.RLock()


_atexit.register(_stop_work_at_exit)


class _NoTurnAfterFork:
    """The turn in a child forked while its parent's files were being worked on: the HDF5
    library may have been in the middle of a write, and the thread that held the turn is gone
    (the child would wait for it for ever)."""

    def __enter__(self):
        raise RuntimeError(
            "this process was forked while its parent ran a run, sweep or rendering: the HDF5 "
            "library may be in the middle of a write here; start it with multiprocessing's "
            "'spawn' or 'forkserver' start method, or fork between runs")

    def __exit__(self, *exc):
        return False


_TURN_HELD_AT_FORK = False


def _note_the_turn_before_fork():
    global _TURN_HELD_AT_FORK
    if isinstance(_FILE_WORK, _NoTurnAfterFork):  # a child's own child: refused alike
        _TURN_HELD_AT_FORK = True
        return
    owned = _FILE_WORK._is_owned() if hasattr(_FILE_WORK, "_is_owned") else False
    free = not owned and _FILE_WORK.acquire(blocking=False)
    if free:
        _FILE_WORK.release()
    _TURN_HELD_AT_FORK = not free


def _file_work_anew_in_a_child():
    global _FILE_WORK
    _FILE_WORK = _NoTurnAfterFork() if _TURN_HELD_AT_FORK else _threading.RLock()
    _core._work_anew_in_a_child()


_os.register_at_fork(before=_note_the_turn_before_fork, after_in_child=_file_work_anew_in_a_child)

__all__ = [
    "Simulation", "Sweep", "DeviceArray", "open", "sweep", "resume_sweep", "render", "video", "show",
    "explore", "dt_limit", "classify", "change_per_step", "Classification", "PATTERN_CLASSES",
    "__version__",
]

# Every default comes from the settings the command line takes (one table in the C++ library);
# the signatures below name them so that IDEs, help() and inspect.signature show them.
_SIMULATION = _core._defaults("simulation")
_RUN = _core._defaults("run")
_OVER_RANKS = _core._defaults("over_ranks")
_SWEEP = _core._defaults("sweep")


# The keywords the current call names: a preset or a pattern sets only the others, so that an
# explicit argument wins, as an explicit option does on the command line.
_GIVEN = _contextvars.ContextVar("grayscott_given", default=())


# The command line's names that Python spells otherwise, for the hints below.
_COMMAND_LINE_NAMES = {"force": "overwrite", "o": "output", "nbrow": "rows", "nbcol": "cols",
                       "nbimage": "images", "nbextrastep": "steps_per_image", "fuse": "fuse_steps",
                       "deltat": "dt"}


# Keywords a call does not take because another does what they ask: said instead of a hint.
_TAKEN_ELSEWHERE = {
    ("Sweep", "comm"): "a Sweep in memory runs in one process; gs.sweep(output, ..., comm=comm) "
                       "splits a sweep's members over MPI ranks into its file",
}


def _bind(function, signature, args, kwargs):
    """signature.bind, a misspelt keyword (or the command line's name) given the command line's
    hint: "Simulation() got an unexpected keyword argument 'colls' (did you mean cols?)"."""
    try:
        return signature.bind(*args, **kwargs)
    except TypeError as error:
        called = function.__qualname__.removesuffix(".__init__")
        unknown = [name for name in kwargs if name not in signature.parameters]
        if not unknown or any(p.kind == p.VAR_KEYWORD for p in signature.parameters.values()):
            # "missing a required argument: 'steps'", said of the call that misses it.
            raise TypeError(f"{called}(): {error}") from None
        if (called, unknown[0]) in _TAKEN_ELSEWHERE:
            raise TypeError(f"{called}() takes no {unknown[0]}: "
                            f"{_TAKEN_ELSEWHERE[called, unknown[0]]}") from None
        names = [name for name in signature.parameters if name != "self"]
        close = _core._nearest_name(unknown[0].replace("-", "_"), names)
        if _COMMAND_LINE_NAMES.get(unknown[0]) in names:
            close = _COMMAND_LINE_NAMES[unknown[0]]
        hint = f" (did you mean {close}?)" if close else ""
        raise TypeError(f"{called}() got an unexpected keyword argument {unknown[0]!r}{hint}"
                        ) from None


def _hints_misspelt_keywords(function):
    """`function` as it is, a misspelt keyword given a hint (see _bind)."""
    signature = _inspect.signature(function)

    @_functools.wraps(function)
    def call(*args, **kwargs):
        _bind(function, signature, args, kwargs)
        return function(*args, **kwargs)

    return call


def _records_given(function):
    """Records which arguments each call of `function` names (its signature stays as it is)."""
    signature = _inspect.signature(function)

    @_functools.wraps(function)
    def call(*args, **kwargs):
        bound = _bind(function, signature, args, kwargs)
        token = _GIVEN.set(tuple(bound.arguments))
        try:
            return function(*args, **kwargs)
        finally:
            _GIVEN.reset(token)

    return call


def _arguments(values: dict, *leave_out: str) -> dict:
    """A function's arguments (its locals() on entry) as the settings' keywords."""
    return {k: v for k, v in values.items() if k not in ("self", "__class__") + leave_out}


def _named_arguments(values: dict, *leave_out: str) -> dict:
    """_arguments, with the names the call gave (in a function that _records_given)."""
    arguments = _arguments(values, *leave_out)
    # None means the default: not a value the call gives (a preset's or a pattern's stands).
    arguments["_given"] = [name for name in _GIVEN.get()
                           if name in arguments and arguments[name] is not None]
    return arguments


@_hints_misspelt_keywords
def dt_limit(stencil: str = _SIMULATION["stencil"], du: float = _SIMULATION["du"],
             dv: float = _SIMULATION["dv"], feed: float = _SIMULATION["feed"],
             kill: float = _SIMULATION["kill"], everywhere: bool = False) -> float:
    """The largest explicit-Euler time step a run accepts with these rates and this stencil.

    Beyond it rounding errors grow at every step at the feed's rest state u = 1, v = 0, which
    every run holds. ``everywhere=True`` gives the smaller dt that is stable at every state
    u, v >= 0 with u + v <= 1 (see docs/model.md).
    """
    # None means the default, as for every keyword.
    stencil = _SIMULATION["stencil"] if stencil is None else stencil
    du = _SIMULATION["du"] if du is None else du
    dv = _SIMULATION["dv"] if dv is None else dv
    feed = _SIMULATION["feed"] if feed is None else feed
    kill = _SIMULATION["kill"] if kill is None else kill
    everywhere = False if everywhere is None else everywhere
    if not isinstance(stencil, str):
        raise TypeError(f"stencil: expected a name or nine comma-separated weights (a str), got "
                        f"{type(stencil).__name__}")
    return _core._dt_limit(stencil, du, dv, feed, kill, everywhere)


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
        # the view did), so the consumer's `stream` may read it at once; the other way round, the
        # engine's next advance waits for the work consumers queued on the device (their writes
        # through the view come first). The capsule is DLPack's unversioned one, which consumers
        # asking for max_version still take.
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


def _in_notebook() -> bool:
    shell = _sys.modules.get("IPython")
    if shell is None:
        return False
    try:
        ip = shell.get_ipython()
    except AttributeError:
        return False
    return ip is not None and type(ip).__name__ == "ZMQInteractiveShell"


def _path(name: str, value, default: str | None = None) -> str:
    """A path argument as text: a str, bytes or os.PathLike; None means its default (where it
    has one); TypeError naming the argument otherwise."""
    if value is None and default is not None:
        return default
    if isinstance(value, (str, bytes, _os.PathLike)):
        path = _os.fsdecode(value)
        if "\0" in path:  # as open() says it: the system would read the name up to it
            raise ValueError(f"{name}: embedded null byte")
        return path
    raise TypeError(f"{name}: expected a path (str or os.PathLike), got {type(value).__name__}")


def _pair(name: str, value):
    """Two numbers (low, high): a sequence of two, or the command line's text "LOW,HIGH" (or
    "LOW:HIGH"); None: (None, None), the defaults."""
    if value is None:
        return None, None
    if isinstance(value, str):
        parts = value.replace(":", ",").split(",")
        try:
            if len(parts) == 2:
                return float(parts[0]), float(parts[1])
        except ValueError:
            pass
        raise ValueError(f"{name}: expected two numbers 'LOW,HIGH', got {value!r}")
    try:
        low, high = value
    except (TypeError, ValueError):
        raise TypeError(f"{name}: expected (low, high), got {type(value).__name__} "
                        f"{value!r}") from None
    return low, high


def _progress(progress):
    """The progress callable, checked before anything is written."""
    if progress is not None and not callable(progress):
        raise TypeError(f"progress: expected a callable f(done, total), got "
                        f"{type(progress).__name__}")
    return progress


def _default_progress(quiet: bool, label: str, unit: str = "image"):
    """A tqdm bar (tqdm.auto: a widget in a notebook, a line on a terminal) counting images (or
    another `unit`: pictures, frames), or None when quiet, when nobody watches (no terminal, no
    notebook) or without tqdm."""
    if quiet or not (_in_notebook() or _sys.stderr.isatty()):
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    bar = None

    def update(done: int, total: int):
        nonlocal bar
        if bar is None:
            bar = tqdm(total=total, initial=done - 1, desc=label, unit=unit, leave=True)
        bar.update(done - bar.n)
        if done >= total:
            bar.close()

    return update


# The longer side of a live picture, in pixels: enough to see the pattern, small enough to encode
# in about a millisecond.
_LIVE_PIXELS = 512


def _picture_of(values, value_range=(0.0, 0.5), colormap="inferno", pixels=None):
    """PNG bytes of a 2D array, coloured as ``grayscott render`` colours v (inferno, 0 to 0.5),
    row 0 at the top; subsampled to at most ``pixels`` on its longer side. A volume's array
    (depth, rows, cols) is drawn by its middle plane, as ``grayscott render`` draws it."""
    import numpy

    array = numpy.asarray(values)
    if array.ndim == 3:
        array = array[array.shape[0] // 2]
    if array.ndim != 2:
        raise ValueError(f"values: expected a 2D array (or a volume's 3D one), got shape {array.shape}")
    if pixels is not None and max(array.shape) > pixels:
        stride = -(-max(array.shape) // pixels)
        array = array[::stride, ::stride]
    array = numpy.ascontiguousarray(array, dtype=numpy.float64)
    return _core._png(array, {"range": tuple(value_range), "colormap": colormap})


class _LivePicture:
    """One picture in a notebook, updated in place from a run's images, at most as often as keeps
    its cost (colouring, encoding, sending) under 0.5 % of the run's time so far: with the per-image
    hook (about 1.3 % on the course's grid), a live run stays within 2 % of a plain one."""

    def __init__(self, images: int):
        from IPython.display import Image, display

        self._image = Image
        self._handle = display(display_id=True)
        self._images = images
        self._start = _time.monotonic()
        self._spent = 0.0
        self.shown = 0

    def __call__(self, index, step, time, image):
        now = _time.monotonic()
        last = index + 1 == self._images
        if self.shown and not last and self._spent > 0.005 * (now - self._start):
            return
        self._handle.update(self._image(data=_picture_of(image, pixels=_LIVE_PIXELS), format="png"))
        self.shown += 1
        self._spent += _time.monotonic() - now


def _callbacks(images, on_image, live):
    """The hook run() hands the engine: the user's on_image, the live picture, or both; and whether
    the images it receives may be views that live only during the call (no copy)."""
    live = _flag("live", live)
    if on_image is not None and not callable(on_image):
        raise TypeError(f"on_image: expected a callable f(index, step, time, image), got "
                        f"{type(on_image).__name__}")
    if live and not _in_notebook():
        live = False  # nothing to show outside a notebook: the run is the same
    picture = _LivePicture(images) if live else None
    if picture is None:
        return on_image, False
    if on_image is None:
        return picture, True

    def both(index, step, time, image):
        picture(index, step, time, image)
        on_image(index, step, time, image)

    return both, False


def _over_ranks(comm, split: str = "a grid is split") -> bool:
    """Whether `comm` (an mpi4py communicator, or None) asks to split the work (`split` says
    which) over ranks."""
    if comm is None:
        return False
    from mpi4py import MPI

    if not isinstance(comm, MPI.Comm):
        raise TypeError(f"comm: expected an mpi4py communicator, got {type(comm).__name__}")
    if MPI.Comm.Compare(comm, MPI.COMM_WORLD) not in (MPI.IDENT, MPI.CONGRUENT):
        raise ValueError(f"comm: {split} over MPI.COMM_WORLD (or a duplicate of it), "
                         "not over part of the ranks")
    return comm.Get_size() > 1


class Simulation(_core._Simulation):
    """One Gray-Scott simulation whose state stays on its engine.

    The arguments are the command line's options of the same names (``grayscott run --help``),
    with the same defaults, limits and messages. ``depth`` above 1 makes the grid a volume of
    that many planes: ``u`` and ``v`` then have shape (depth, rows, cols) and the stencil is a
    volume's ("seven-point", the default there, or "nineteen-point"). ``stencil`` is a name
    ("oono-puri", "pretty", "five-point") or nine comma-separated weights; ``boundary`` is "zero-flux", "periodic" or
    "fixed" (``outside``: the values u, v beyond the grid, default (1, 0)); ``precision`` "single"
    or "double"; ``backend`` "auto" or a backend's name ("cpu", "cuda"); ``init`` "rectangle", "noise" (with
    ``seed``), "box", "box-bordered", "drop" or "cube" (``init_values``: u, v inside its shape).
    ``pattern`` names F and k ("worms", ...), ``preset`` one of the courses' programs
    ("course-numpy", "course-numba", "course-cupy", "course-jax", "course-kokkos", "course-cpp":
    stencil, boundary, outside, start, precision, rates, and the steps per image of ``run``), or
    "adios2" (ADIOS2's Gray-Scott example: its 64x64x64 volume too); the
    arguments a call names win over both. ``threads`` (CPU, 0: all cores), ``fuse_steps`` (steps
    per pass over the grid, 0: the engine's best).

    The rates ``feed``, ``kill``, ``du``, ``dv`` and ``dt`` can be changed between advances; they
    take effect at the next step. Bad input raises TypeError or ValueError naming the argument,
    MemoryError for a grid that does not fit.

    ``comm=MPI.COMM_WORLD`` (mpi4py), under ``mpirun -n P python script.py``, splits the grid
    (a plane or a volume) over the P ranks as ``mpirun grayscott run`` does: ``u`` and ``v`` are
    then this rank's block, (rows, cols) or a volume's (planes, rows, cols) (``sim.block`` says
    where it lies in the grid), and ``run()`` writes one file, the same as one process's.
    ``decomposition`` ("RxC", a volume's "PxRxC", as ``--decomposition``) chooses how many ranks
    split each axis instead of the automatic choice; ``halo_depth`` (steps per halo exchange, 0:
    automatic), ``gpu_aware_mpi`` and ``overlap_writes`` ("auto", "on" or "off") are the command
    line's options of the same names.
    """

    __slots__ = ("_on_device",)

    def advance(self, steps: int) -> None:
        """Advance by ``steps`` explicit-Euler steps, fused on the engine; the GIL is released and
        Ctrl-C raises KeyboardInterrupt within about 0.1 s, the state being that of the last
        step done (see ``step``)."""
        self._advance(steps)  # Python says a wrong call in one line; nanobind listed overloads

    def reset(self) -> None:
        """Load the initial state again and set the step count to 0."""
        self._reset()

    @_records_given
    def __init__(
        self,
        rows: int = _SIMULATION["rows"],
        cols: int = _SIMULATION["cols"],
        depth: int = _SIMULATION["depth"],
        feed: float = _SIMULATION["feed"],
        kill: float = _SIMULATION["kill"],
        du: float = _SIMULATION["du"],
        dv: float = _SIMULATION["dv"],
        dt: float = _SIMULATION["dt"],
        stencil: str = _SIMULATION["stencil"],
        boundary: str = _SIMULATION["boundary"],
        precision: str = _SIMULATION["precision"],
        outside=_SIMULATION["outside"],
        init: str = _SIMULATION["init"],
        init_values=_SIMULATION["init_values"],
        seed: int | None = _SIMULATION["seed"],
        pattern: str | None = _SIMULATION["pattern"],
        preset: str | None = _SIMULATION["preset"],
        backend: str = _SIMULATION["backend"],
        threads: int = _SIMULATION["threads"],
        fuse_steps: int = _SIMULATION["fuse_steps"],
        device: int = _SIMULATION["device"],
        *,
        comm=None,
        decomposition: str | None = _OVER_RANKS["decomposition"],
        halo_depth: int = _OVER_RANKS["halo_depth"],
        gpu_aware_mpi: str = _OVER_RANKS["gpu_aware_mpi"],
        overlap_writes: str = _OVER_RANKS["overlap_writes"],
    ):
        """A simulation of these settings (the class's docstring says each)."""
        super().__init__(_named_arguments(locals(), "comm"), comm is not None, _over_ranks(comm))
        self._on_device = self.on_device

    @property
    def block(self):
        """Where this process's ``u`` and ``v`` lie in the grid: ``(rows, cols)`` slices, and a
        volume's ``(planes, rows, cols)``; the whole grid for one process. Under MPI,
        ``whole[sim.block] = sim.v`` on each rank's part."""
        row, rows, col, cols, *planes = self._block
        where = slice(row, row + rows), slice(col, col + cols)
        if planes:
            plane, count = planes
            where = (slice(plane, plane + count),) + where
        return where

    @property
    def u(self):
        """The current u, without a copy (see `v`)."""
        return _view(self, "u")

    @property
    def v(self):
        """The current v, without a copy.

        On the CPU a NumPy array over the engine's memory; on a GPU a DeviceArray. A write
        through it is the state the next advance starts from. A view stays current: after every
        advance or run the state is back in the memory the view shows, so ``v = sim.v`` once and
        read ``v`` after each ``advance`` (copy it, ``v.copy()``, to keep a state).
        """
        return _view(self, "v")

    @_records_given
    def run(
        self,
        images: int = _RUN["images"],
        steps_per_image: int = _RUN["steps_per_image"],
        output: str | _os.PathLike = _RUN["output"],
        fields: str = _RUN["fields"],
        overwrite: bool = _RUN["overwrite"],
        checkpoint_every=_RUN["checkpoint_every"],
        progress=None,
        quiet: bool = _RUN["quiet"],
        on_image=None,
        live: bool = False,
        stats: bool = _RUN["stats"],
        histogram_bins: int = _RUN["histogram_bins"],
        histogram_range=_RUN["histogram_range"],
        until_steady: float = _RUN["until_steady"],
        steady_images: int = _RUN["steady_images"],
        classify: bool = _RUN["classify"],
        render: str | _os.PathLike | None = None,
    ) -> dict:
        """Run the pipeline of ``grayscott run`` on this simulation: ``images`` images of
        ``steps_per_image`` steps each, written to ``output`` (the same file as the command
        line's), from the initial state (the simulation must be at step 0: see ``reset``).

        ``on_image(index, step, time, image)`` is called with each image (a read-only NumPy copy
        of v, or of u when only u is written) before it is written; inside it ``sim.u``,
        ``sim.v`` and ``sim.step`` are those of that image. ``live=True`` shows the images in a
        notebook as they arrive, in one picture updated in place. ``progress(done, total)`` is
        called after each image (to report: ``sim.u`` and ``sim.v`` are read-only inside it); by
        default a tqdm bar is drawn in a terminal or a notebook unless ``quiet``.

        Ctrl-C, or an exception in a callback, stops the run at that image: the file keeps every
        image and a checkpoint, its status says why, and the exception (KeyboardInterrupt saying
        how to continue: ``Simulation.resume(output)``) reaches the caller. The simulation holds
        the last state afterwards. Returns a summary (images written, seconds, cell updates per
        second, status, whether it settled).

        ``stats=True`` measures every image as it is made (``sim.stats()`` inside ``on_image``;
        ``/stats`` in the file, beside v in ``gs.open(output)``: ``ds.v_mean``, ...);
        ``until_steady=TOL`` stops once the
        change of v per step stays below TOL for ``steady_images`` images in a row;
        ``classify=True`` labels every image with its pattern class (``/stats/class``).

        ``render=DIR`` also writes a PNG picture of v (of u where the run writes u alone) per
        image into DIR once the run ends, as ``grayscott run --render DIR`` does (pictures that
        exist are refused before the run unless ``overwrite``); the summary's ``pictures`` lists
        them.
        """
        settings = _named_arguments(locals(), "progress", "on_image", "live")
        settings["output"] = output = _path("output", output, _RUN["output"])
        if _progress(progress) is None and not self._over_ranks:
            progress = _default_progress(quiet, output)
        hook, views = _callbacks(images, on_image, live)
        with _FILE_WORK:
            summary = self._run(settings, progress, hook, False, views)
        return self._render_after(summary, output, render, overwrite, quiet)

    def _render_after(self, summary: dict, output: str, folder, overwrite: bool, quiet: bool):
        """The pictures of `render=`: rendered by the process that reports (rank 0 over ranks)
        once the run has written its images, listed in the summary. A run whose values became
        non-finite raises FloatingPointError afterwards, its pictures of the images before drawn
        (as ``grayscott run --render`` draws them before its error)."""
        diverged = summary.pop("diverged", None)
        if folder is not None and self._reports and summary["images_written"] > 0:
            # v, or u where the run writes u alone: the file's field, as gs.render draws it.
            summary["pictures"] = _render_pictures(output, folder, {"overwrite": overwrite}, None,
                                                   quiet)
        if diverged is not None:
            raise FloatingPointError(diverged)
        return summary

    @classmethod
    def resume(cls, path, backend: str = _SIMULATION["backend"], threads: int = _SIMULATION["threads"],
               progress=None, quiet: bool = False, checkpoint_every=_RUN["checkpoint_every"],
               on_image=None, live: bool = False, comm=None,
               decomposition: str | None = _OVER_RANKS["decomposition"],
               fuse_steps: int = _SIMULATION["fuse_steps"],
               device: int = _SIMULATION["device"],
               render: str | _os.PathLike | None = None,
               overwrite: bool = False, halo_depth: int = _OVER_RANKS["halo_depth"],
               gpu_aware_mpi: str = _OVER_RANKS["gpu_aware_mpi"],
               overlap_writes: str = _OVER_RANKS["overlap_writes"]) -> "Simulation":
        """Continue the unfinished run in ``path`` from its newest checkpoint to its end, as
        ``grayscott run --resume`` does, and return the simulation holding its final state.
        The parameters come from the file; how it is computed (``backend``, ``threads``,
        ``fuse_steps``, ``device``) is as in Simulation. ``comm=MPI.COMM_WORLD`` under ``mpirun``
        continues it split over the ranks, on any number of them (as ``mpirun grayscott run
        --resume``), ``decomposition``, ``halo_depth``, ``gpu_aware_mpi`` and ``overlap_writes`` as
        in Simulation; each rank's simulation then holds its
        block. ``render=DIR`` writes the pictures of every image of the file once it is complete,
        as ``run(render=DIR)``; ``overwrite=True`` replaces pictures that exist there (only them:
        the file is continued, never replaced)."""
        path = _path("path", path)
        _progress(progress)
        with _FILE_WORK:
            parameters = _core._resumable_run(path)
            sim = cls(**parameters, backend=backend, threads=threads, fuse_steps=fuse_steps,
                      device=device, comm=comm, decomposition=decomposition,
                      halo_depth=halo_depth, gpu_aware_mpi=gpu_aware_mpi,
                      overlap_writes=overlap_writes)
            if progress is None and not sim._over_ranks:
                progress = _default_progress(quiet, path)
            hook, views = _callbacks(0, on_image, live)
            settings = {"output": path, "quiet": quiet, "checkpoint_every": checkpoint_every,
                        "overwrite": overwrite}
            if render is not None:
                settings["render"] = render
            summary = sim._run(settings, progress, hook, True, views)
        sim._render_after(summary, path, render, overwrite, quiet)
        return sim

    @_hints_misspelt_keywords
    def stats(self, bins: int | None = None, range=None) -> dict:
        """Statistics of the current state: ``u_min``, ``u_max``, ``u_mean``, ``u_std``, the same
        of v, a ``histogram`` of v (``bins`` bins over ``range``, by default 50 over (0, 1);
        values outside, and NaN, count in the end bins), and inside a ``run(stats=True)``
        callback the run's own (its histogram by default), with ``change_max`` and
        ``change_rms_per_step``
        since the previous image (NaN otherwise, and for another histogram than the run's). The
        histogram is a NumPy array of counts, as ``gs.open(file).v_histogram`` holds them."""
        return _histograms_as_arrays(self._statistics(bins, *_pair("range", range)))[0]

    def __copy__(self):
        raise TypeError("a Simulation owns its engine and is not copied: copy its state "
                        "(sim.u.copy(), sim.v.copy()) or make another Simulation")

    __deepcopy__ = lambda self, memo: self.__copy__()  # noqa: E731 - the same refusal

    def _repr_png_(self):
        """The current v as a picture (Jupyter shows a Simulation so)."""
        import numpy

        return _picture_of(numpy.asarray(self.v), pixels=_LIVE_PIXELS)

    def __repr__(self):
        p = self.parameters
        return (
            f"Simulation(rows={p['rows']}, cols={p['cols']}, "
            + (f"depth={p['depth']}, " if p["depth"] > 1 else "")
            + f"feed={p['feed']}, kill={p['kill']}, "
            f"precision={p['precision']!r}, backend={self.backend!r}, step={self.step})"
        )


class Sweep(_core._Sweep):
    """Many simulations stepped together in one engine (JAX's ``vmap``): every combination of
    ``feed``, ``kill`` and ``seeds`` (kill varying fastest, then feed, then seed), sharing the
    grid, diffusion rates, stencil, boundary and precision.

    ``feed`` and ``kill`` are a number, a sequence of numbers, or the command line's
    "START:STOP:COUNT". ``u`` and ``v`` have shape (members, rows, cols) and are views, as for
    Simulation. With ``seeds`` the members start from the rectangle with noise (``init`` defaults
    to "noise" then, as for ``grayscott sweep --seeds``), one seed each.
    """

    __slots__ = ("_on_device",)

    # advance and reset are Simulation's, written again rather than shared: Python names a wrong
    # call by the function's qualified name ("Sweep.advance() missing 1 required positional
    # argument"), and a type checker sees them in the class that has them.
    def advance(self, steps: int) -> None:
        """Advance by ``steps`` explicit-Euler steps, fused on the engine; the GIL is released and
        Ctrl-C raises KeyboardInterrupt within about 0.1 s, the state being that of the last
        step done (see ``step``)."""
        self._advance(steps)  # Python says a wrong call in one line; nanobind listed overloads

    def reset(self) -> None:
        """Load the initial state again and set the step count to 0."""
        self._reset()

    @_records_given
    def __init__(
        self,
        feed=_SWEEP["feed"],
        kill=_SWEEP["kill"],
        seeds=_SWEEP["seeds"],
        rows: int = _SWEEP["rows"],
        cols: int = _SWEEP["cols"],
        depth: int = _SWEEP["depth"],
        du: float = _SWEEP["du"],
        dv: float = _SWEEP["dv"],
        dt: float = _SWEEP["dt"],
        stencil: str = _SWEEP["stencil"],
        boundary: str = _SWEEP["boundary"],
        precision: str = _SWEEP["precision"],
        outside=_SWEEP["outside"],
        init: str | None = None,
        init_values=_SWEEP["init_values"],
        seed: int | None = _SWEEP["seed"],
        pattern: str | None = _SWEEP["pattern"],
        preset: str | None = _SWEEP["preset"],
        backend: str = _SWEEP["backend"],
        threads: int = _SWEEP["threads"],
        fuse_steps: int = _SWEEP["fuse_steps"],
        device: int = _SWEEP["device"],
    ):
        """A batch of simulations of these settings (the class's docstring says each)."""
        super().__init__(_named_arguments(locals()))
        self._on_device = self.on_device

    @property
    def shape(self):
        """(members, rows, cols), the shape of ``u`` and ``v``; (members, depth, rows, cols) for
        volumes."""
        return (len(self),) + tuple(super().shape)

    @property
    def parameters(self):
        """The grid, rates, stencil, boundary and precision the members share, with ``feed`` and
        ``kill`` as lists of each member's (in ``members``' order)."""
        shared = dict(super().parameters)
        shared["feed"] = [feed for feed, _, _ in self.members]
        shared["kill"] = [kill for _, kill, _ in self.members]
        return shared

    @property
    def u(self):
        """Every member's current u, shape (members, rows, cols), without a copy."""
        return _view(self, "u")

    @property
    def v(self):
        """Every member's current v, shape (members, rows, cols), without a copy."""
        return _view(self, "v")

    @_hints_misspelt_keywords
    def stats(self, bins: int | None = None, range=None) -> list:
        """Each member's statistics of its current state (see `Simulation.stats`)."""
        return _histograms_as_arrays(self._statistics(bins, *_pair("range", range)))

    def __len__(self):
        return len(self.members)

    def __repr__(self):
        p = self.parameters
        shape = (f"{p['depth']}x" if p["depth"] > 1 else "") + f"{p['rows']}x{p['cols']}"
        members = "1 member" if len(self) == 1 else f"{len(self)} members"
        return f"Sweep({members} of {shape}, backend={self.backend!r}, step={self.step})"


@_records_given
def sweep(
    output=_SWEEP["output"],
    feed=_SWEEP["feed"],
    kill=_SWEEP["kill"],
    seeds=_SWEEP["seeds"],
    rows: int = _SWEEP["rows"],
    cols: int = _SWEEP["cols"],
    depth: int = _SWEEP["depth"],
    images: int = _SWEEP["images"],
    steps_per_image: int = _SWEEP["steps_per_image"],
    du: float = _SWEEP["du"],
    dv: float = _SWEEP["dv"],
    dt: float = _SWEEP["dt"],
    stencil: str = _SWEEP["stencil"],
    boundary: str = _SWEEP["boundary"],
    precision: str = _SWEEP["precision"],
    outside=_SWEEP["outside"],
    init: str | None = None,
    init_values=_SWEEP["init_values"],
    seed: int | None = _SWEEP["seed"],
    pattern: str | None = _SWEEP["pattern"],
    preset: str | None = _SWEEP["preset"],
    fields: str = _SWEEP["fields"],
    overwrite: bool = _SWEEP["overwrite"],
    quiet: bool = False,
    checkpoint_every=_SWEEP["checkpoint_every"],
    max_batch_memory=_SWEEP["max_batch_memory"],
    backend: str = _SWEEP["backend"],
    threads: int = _SWEEP["threads"],
    fuse_steps: int = _SWEEP["fuse_steps"],
    device: int = _SWEEP["device"],
    stats: bool = _SWEEP["stats"],
    histogram_bins: int = _SWEEP["histogram_bins"],
    histogram_range=_SWEEP["histogram_range"],
    until_steady: float = _SWEEP["until_steady"],
    steady_images: int = _SWEEP["steady_images"],
    classify: bool = _SWEEP["classify"],
    progress=None,
    comm=None,
) -> dict:
    """Write a sweep to ``output`` through the pipeline of ``grayscott sweep`` (batches that fit
    in memory, the same file); the arguments are that command's options. ``progress(done,
    total)`` is called after each image with the member-images written and to write (default: a
    tqdm bar unless quiet). Ctrl-C stops it at an image boundary with its checkpoints saved;
    ``resume_sweep(output)`` (or ``grayscott sweep --resume output``) continues it.
    ``comm=MPI.COMM_WORLD`` (mpi4py) under ``mpirun`` splits the members over the ranks, as
    ``mpirun grayscott sweep`` does, into the same file (every rank calls it alike)."""
    output = _path("output", output, _SWEEP["output"])
    return _sweep_file(_named_arguments(locals(), "progress", "comm"), output, progress, quiet,
                       comm)


@_records_given
def resume_sweep(
    path,
    *,
    quiet: bool = False,
    checkpoint_every=_SWEEP["checkpoint_every"],
    max_batch_memory=_SWEEP["max_batch_memory"],
    backend: str = _SWEEP["backend"],
    threads: int = _SWEEP["threads"],
    fuse_steps: int = _SWEEP["fuse_steps"],
    device: int = _SWEEP["device"],
    progress=None,
    comm=None,
) -> dict:
    """Continue the stopped sweep in ``path``, each member from its newest checkpoint to its
    end, as ``grayscott sweep --resume`` does: its parameters come from the file, how it is
    computed from these arguments (as in ``sweep``, ``comm`` too, on any number of ranks); the
    finished file is bitwise the uninterrupted sweep's. Returns the summary, as ``sweep``."""
    path = _path("path", path)
    return _sweep_file({**_named_arguments(locals(), "progress", "path", "comm"), "resume": path},
                       path, progress, quiet, comm)


def _sweep_file(arguments: dict, path: str, progress, quiet: bool, comm) -> dict:
    """The pipeline of ``grayscott sweep`` writing (or continuing) `path`, counted by
    `progress`, or by a tqdm bar unless quiet; over the ranks of `comm` where it has several."""
    over_ranks = _over_ranks(comm, "a sweep's members are split")
    if _progress(progress) is None and not over_ranks:
        progress = _default_progress(quiet, path)
    with _FILE_WORK:
        return _core._sweep_to_file(arguments, progress, over_ranks)


def _render_pictures(file: str, out, look: dict, progress, quiet: bool) -> list:
    """The pictures of `file` into the folder `out` (render, run's render=), with a progress bar
    counting them unless `progress` is given or `quiet`."""
    import pathlib

    out = _path("out", out, "images")
    if _progress(progress) is None:
        progress = _default_progress(quiet, out, "picture")
    with _FILE_WORK, _quiet_if(quiet):
        written = _core._render(file, out, look, progress)
    return [pathlib.Path(p) for p in written]


@_contextlib.contextmanager
def _quiet_if(quiet: bool):
    """Where quiet, the notes a rendering gives as warnings (what an unfinished file holds) are
    not shown, as ``grayscott render --quiet`` prints none."""
    if not quiet:
        yield
        return
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        yield


@_hints_misspelt_keywords
def render(file, out="images", *, field: str | None = None, range=(0.0, 0.5), colormap: str = "inferno",
           scale="auto", annotate: bool = False, image: int | None = None,
           slice: str | None = None, projection: str | None = None,
           overwrite: bool = False, progress=None, quiet: bool = False) -> list:
    """PNG pictures of a run file's images (or a sweep file's atlas) into the folder ``out``, as
    ``grayscott render`` writes them (the same code); returns the paths written. ``field`` is
    "u" or "v" (default: v, or u where the file holds u alone). A volume's
    pictures show the plane ``slice`` ("z=N", "y=N" or "x=N", N from 0 or "mid"; default: the
    middle plane across z) or its ``projection`` ("max"). ``progress(done, total)`` is called
    after each picture; by default a tqdm bar counts them unless ``quiet``."""
    look = _arguments(locals(), "file", "out", "progress", "quiet")
    return _render_pictures(_path("file", file), out, look, progress, quiet)


@_hints_misspelt_keywords
def video(file, path, *, every: int = 1, fps: float = 10, field: str | None = None,
          range=(0.0, 0.5),
          colormap: str = "inferno", scale="auto", annotate: bool = False,
          image: int | None = None, seed: int | None = None, slice: str | None = None,
          projection: str | None = None, overwrite: bool = False, progress=None,
          quiet: bool = False):
    """A video (``.mp4``, ``.webm``, ``.avi`` or ``.gif``, through the ffmpeg program) of a run
    file's images, or of a sweep file's atlas, as ``grayscott render --video`` writes it; returns
    its path: a frame per ``every`` images from the first to the last, or of ``image`` alone
    (counted as in ``render``). ``slice`` and ``projection`` pick a volume's view as in
    ``render``; ``progress(done, total)`` is called after each frame, by default a tqdm bar
    unless ``quiet``."""
    look = _arguments(locals(), "file", "path", "progress", "quiet")
    import pathlib

    path = _path("path", path)
    if _progress(progress) is None:
        progress = _default_progress(quiet, path, "frame")
    with _FILE_WORK, _quiet_if(quiet):
        _core._video(_path("file", file), path, look, progress)
    return pathlib.Path(path)


@_hints_misspelt_keywords
def show(what, range=(0.0, 0.5), colormap: str = "inferno"):
    """A picture of a Simulation's v or of any 2D array (``sweep.v[3]``, a CuPy array's
    ``.get()``), for a notebook: an IPython Image, row 0 at the top, coloured as ``grayscott
    render`` colours v."""
    import numpy
    from IPython.display import Image

    values = numpy.asarray(what.v if isinstance(what, Simulation) else what)
    if values.dtype.kind not in "biuf":
        raise TypeError(f"show: expected a Simulation or a 2D array of numbers, got "
                        f"{type(what).__name__} {what!r:.40}")
    range = (0.0, 0.5) if range is None else range
    colormap = "inferno" if colormap is None else colormap
    return Image(data=_picture_of(values, range, colormap, _LIVE_PIXELS), format="png")


def explore(rows: int = 128, cols: int = 128, steps: int = 3000, feed: float = 0.037,
            kill: float = 0.06, **settings):
    """A panel of sliders for F and k over a picture of v after ``steps`` steps of a small grid,
    run again at every change (ipywidgets, in a notebook); other keywords go to Simulation
    (``init="noise"``, ``boundary="periodic"``, ...). Returns the panel."""
    import ipywidgets as widgets
    import numpy

    picture = widgets.Image(format="png")
    feed_slider = widgets.FloatSlider(value=feed, min=0.0, max=0.1, step=0.0005,
                                      readout_format=".4f", description="feed F",
                                      continuous_update=False)
    kill_slider = widgets.FloatSlider(value=kill, min=0.03, max=0.08, step=0.0005,
                                      readout_format=".4f", description="kill k",
                                      continuous_update=False)

    def draw(feed, kill):
        sim = Simulation(rows=rows, cols=cols, feed=feed, kill=kill, **settings)
        sim.advance(steps)
        picture.value = _picture_of(numpy.asarray(sim.v), pixels=_LIVE_PIXELS)

    # Observers rather than widgets.interactive, whose output area clears itself with terminal
    # escapes when the panel is made outside a notebook (a script, a test).
    def redraw(_change=None):
        draw(feed_slider.value, kill_slider.value)

    feed_slider.observe(redraw, names="value")
    kill_slider.observe(redraw, names="value")
    redraw()  # the first picture; a refused setting raises here, before any panel is shown
    return widgets.VBox([widgets.VBox([feed_slider, kill_slider]), picture])


# The pattern classes, in the order of the C++ enum (src/analysis/classify.hpp): the order files
# store them in.
PATTERN_CLASSES = ("decayed", "uniform", "spots", "stripes", "holes", "mixed", "waves")


def _histograms_as_arrays(statistics: list) -> list:
    """Each member's statistics with its histogram as a NumPy array of counts (uint64, as the
    file's /stats/v_histogram)."""
    import numpy

    for member in statistics:
        member["histogram"] = numpy.asarray(member["histogram"], dtype=numpy.uint64)
    return statistics


class Classification:
    """What ``classify`` found: ``pattern`` (one of PATTERN_CLASSES) and ``features`` (a dict:
    rows, cols, periodic, v_min, v_max, v_mean, threshold, covered, change_per_step, and the
    components of v above the threshold, ``objects``, and of the rest, ``holes``, each a dict of
    count, mean_area, area_cv, mean_roundness, mean_elongation, round_fraction, wrapping,
    cut_by_edge). ``str()`` is the pattern's name."""

    __slots__ = ("pattern", "features")

    def __init__(self, pattern: str, features: dict):
        self.pattern = pattern
        self.features = features

    def __str__(self):
        return self.pattern

    def __repr__(self):
        f = self.features
        return (f"Classification(pattern={self.pattern!r}, covered={f['covered']:.3f}, "
                f"objects={f['objects']['count']}, holes={f['holes']['count']}, "
                f"change_per_step={f['change_per_step']!r})")

    def __eq__(self, other):
        if isinstance(other, str):
            return self.pattern == other
        if isinstance(other, Classification):
            return (self.pattern, self.features) == (other.pattern, other.features)
        return NotImplemented

    def __hash__(self):
        # Equal to its name yet carrying a dict of features: no hash would keep both promises.
        raise TypeError("unhashable type: 'Classification' (count or key classes by name: "
                        "c.pattern)")


def _host_array(values, name):
    """A C-contiguous float32 or float64 NumPy copy or view of a 2D array-like (NumPy, a CuPy
    array through .get(), JAX, a DeviceArray, nested lists)."""
    import numpy

    if isinstance(values, numpy.ma.MaskedArray):
        # asarray would drop the mask and read what lies under it.
        raise TypeError(f"{name}: a masked array; fill its masked cells first ({name}.filled(0))")
    if values is None:
        raise TypeError(f"{name}: expected a 2D array, got None")
    try:
        array = numpy.asarray(values)
    except TypeError:
        if not hasattr(values, "get"):
            raise
        array = numpy.asarray(values.get())  # CuPy refuses implicit copies to the host
    except ValueError as error:  # rows of unequal lengths, most often
        raise ValueError(f"{name}: expected a 2D array; NumPy makes none of it: {error}") from None
    if array.dtype.kind not in "biuf":
        raise TypeError(f"{name}: expected an array of numbers, got {type(values).__name__} "
                        f"of dtype {array.dtype}")
    if array.ndim != 2:
        raise ValueError(f"{name}: expected a 2D array, got shape {array.shape}")
    if array.dtype != numpy.float32:
        array = array.astype(numpy.float64, copy=False)
    return numpy.ascontiguousarray(array)


def _flag(name, value, default=False):
    """A bool, or NumPy's (``numpy.bool_``, a 0-d bool array), as a bool; None: the default;
    TypeError otherwise."""
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    if getattr(value, "ndim", None) == 0 and getattr(getattr(value, "dtype", None), "kind", "") == "b":
        return bool(value)
    raise TypeError(f"{name}: expected a bool, got {type(value).__name__} {value!r}")


def _whole(name, value):
    """A whole number, NumPy's integer scalars and 0-d arrays included (not a bool), as an int."""
    import operator

    import numpy

    if not isinstance(value, (bool, numpy.bool_)):
        try:
            return operator.index(value)
        except TypeError:
            pass
    raise TypeError(f"{name}: expected an int, got {type(value).__name__} {value!r}")


@_hints_misspelt_keywords
def classify(v, periodic: bool = False, change_per_step: float | None = None) -> Classification:
    """The pattern of one 2D image of v: ``decayed``, ``uniform``, ``spots``, ``stripes``,
    ``holes``, ``mixed`` or ``waves``, with the features that decided it.

    ``v`` is any 2D array of numbers (NumPy, CuPy, JAX, ``sim.v``), at least 16x16. ``periodic``:
    the image wraps around (a spot crossing an edge is one spot). ``change_per_step``: how much v
    still changes, sqrt(mean((v_i - v_{i-1})**2)) / steps between two images (see
    ``change_per_step()``); without it, ``waves`` is never the answer. docs/classification.md says
    how the classes are told apart and how they match Pearson's map.
    """
    periodic = _flag("periodic", periodic)
    pattern, features = _core._classify(_host_array(v, "v"), periodic, change_per_step)
    return Classification(pattern, features)


@_hints_misspelt_keywords
def change_per_step(previous, current, steps: int) -> float:
    """sqrt(mean((current - previous)**2)) / steps: the RMS change of v per step between two
    images ``steps`` steps apart, as ``classify`` takes it."""
    steps = _whole("steps", steps)
    a = _host_array(previous, "previous")
    b = _host_array(current, "current")
    if a.dtype != b.dtype:
        import numpy

        a = a.astype(numpy.float64)
        b = b.astype(numpy.float64)
    return _core._change_per_step(a, b, steps)


def open(path, **kwargs):  # noqa: A001 - the name users expect, as xarray.open_dataset
    """The run or sweep file ``path`` as an xarray.Dataset, read lazily.

    A run's fields have dims (time, y, x), with coordinates ``step`` and ``time`` (step * dt);
    the file's attributes (rates, grid, stencil, status) become the dataset's. Needs xarray and
    h5netcdf. Extra keyword arguments go to xarray.open_dataset.
    """
    from ._files import open_dataset

    path = _path("path", path)
    # Refused in grayscott's words: no such file, a FIFO, no HDF5 file, an .xmf for its .h5.
    _core._check_hdf5_file(path)
    return open_dataset(path, **kwargs)


del annotations  # the name the __future__ import binds: not the package's

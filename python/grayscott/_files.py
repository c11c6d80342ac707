"""Reading run and sweep files as xarray Datasets (grayscott.open)."""

from __future__ import annotations


def _axis_names(ndim: int, sweep: bool, volume: bool = False) -> tuple[str, ...]:
    names = ("time", "z", "y", "x") if volume else ("time", "y", "x")
    if sweep:
        names = ("member",) + names
    return names[len(names) - ndim:] if ndim < len(names) else names


def _is_open_for_writing(error: OSError) -> bool:
    """HDF5's refusal of a file whose writer has it open (or was killed with it open)."""
    text = str(error)
    return "already open for write" in text or "unable to lock file" in text


def _require(*modules: str) -> None:
    """Says what to install where a module grayscott.open reads files with is missing (they are
    the package's optional "files" dependencies: `pip install .` leaves them out)."""
    import importlib.util

    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        error = ModuleNotFoundError(
            f"grayscott.open needs {' and '.join(missing)}: pip install 'grayscott[files]' "
            "(from a checkout: pip install '.[files]'), or Debian's python3-xarray "
            "python3-h5netcdf")
        error.name = missing[0]
        raise error


def open_dataset(path: str, **kwargs):
    kwargs.setdefault("engine", "h5netcdf")
    _require("xarray", *(("h5netcdf", "h5py") if kwargs["engine"] == "h5netcdf" else ()))
    import xarray as xr

    if kwargs["engine"] == "h5netcdf":
        # Names for the datasets' dimensions that HDF5 leaves unnamed (h5netcdf's option only).
        kwargs.setdefault("phony_dims", "access")
    drop = set(kwargs.pop("drop_variables", ()) or ()) | {"matrix"}  # /matrix is /v's second name
    try:
        ds = xr.open_dataset(path, drop_variables=sorted(drop), **kwargs)
    except OSError as error:
        if "truncated file" in str(error):
            from . import _core

            try:
                _core._check_opens(path)  # says it in grayscott's words (HDF5's: "eof = ...")
            except ValueError as said:
                raise said from None
        if not _is_open_for_writing(error) or kwargs["engine"] != "h5netcdf":
            raise
        # A running file (or one its writer left open: grayscott repair makes it plain again).
        # SWMR mode reads it; xarray cannot ask for it, so the store is opened here and what it
        # holds is read into memory before the file is closed.
        import h5netcdf

        with h5netcdf.File(path, "r", swmr=True, phony_dims=kwargs["phony_dims"]) as nc:
            ds = xr.open_dataset(xr.backends.H5NetCDFStore(nc), drop_variables=sorted(drop)).load()
            ds.set_close(None)  # closed here
        # A flush may be half done: /v can be one image longer than /time and /step.
        images = min(ds.sizes.get(d, 0) for d in ds["step"].dims) if "step" in ds else None
        if images is not None:
            time_dim = ds["step"].dims[0]
            for name in ("u", "v"):
                if name in ds and ds[name].sizes.get(time_dim, images) > images:
                    ds = ds.isel({time_dim: slice(0, images)})
    # The renames and merges below make new Datasets, which xarray does not always give the
    # opened file's close: the one returned closes it (ds.close(), a with block), or the file
    # stays open, and locked against a resume, until the garbage collector finds it.
    close_the_file = ds._close
    try:
        ds = _named(ds, path, kwargs)
    except BaseException:
        if close_the_file is not None:
            close_the_file()
        raise
    ds.set_close(close_the_file)
    return ds


def _named(ds, path: str, kwargs: dict):
    """The Dataset of a run or sweep file with its axes, coordinates and statistics named."""
    # A volume's file (a run's or a sweep's) says its depth; a sweep's its members.
    volume = int(ds.attrs.get("depth", 1)) > 1
    sweep = "members" in ds.attrs or (not volume and any(
        name in ds and ds[name].ndim == 4 for name in ("u", "v")))
    renames = {}
    for name in ("u", "v"):
        if name not in ds:
            continue
        wanted = _axis_names(ds[name].ndim, sweep, volume)
        for old, new in zip(ds[name].dims, wanted):
            if old != new and old.startswith("phony_dim"):
                renames[old] = new
    if "step" in ds and ds["step"].ndim == 1 and ds["step"].dims[0].startswith("phony_dim"):
        renames[ds["step"].dims[0]] = "time"
    if renames:
        ds = ds.rename_dims(renames)
    if "step" in ds and "step" not in ds.coords:
        ds = ds.set_coords("step")
    dt = ds.attrs.get("dt")
    if "step" in ds.coords and dt is not None and "time" not in ds.coords:
        ds = ds.assign_coords(time=("time", ds["step"].values * float(dt)))
    if "stats_histogram_bins" in ds.attrs:
        ds = _with_statistics(ds, path, kwargs)
    # A sweep's images past a member's count are not the sweep's (a stopped sweep leaves them
    # unwritten: they read 0): image_written says which are, ds.v.where(ds.image_written) masks.
    if sweep and "images_written" in ds and "time" in ds.dims and "member" in ds.dims:
        import numpy as np

        counts = np.asarray(ds["images_written"].values)
        written = np.arange(ds.sizes["time"])[None, :] < counts[:, None]
        ds = ds.assign_coords(image_written=(("member", "time"), written))
    # A sweep's members by their parameters: ds.v.sel(feed=0.03, kill=0.06) picks members by
    # value (.isel(member=m) still picks the m-th).
    levels = [name for name in ("feed", "kill", "seed")
              if name in ds.coords and ds[name].dims == ("member",)]
    if sweep and levels == ["feed", "kill", "seed"]:
        ds = ds.drop_vars("member", errors="ignore").set_index(member=levels)
    return ds


def _with_statistics(ds, path: str, kwargs: dict):
    """The run's /stats (grayscott run --stats) beside its images, along the same time axis."""
    import xarray as xr

    options = {k: v for k, v in kwargs.items() if k != "group"}
    try:
        with xr.open_dataset(path, group="stats", **options) as opened:
            stats = opened.load()
    except OSError as error:
        if not _is_open_for_writing(error) or options["engine"] != "h5netcdf":
            raise
        import h5netcdf

        with h5netcdf.File(path, "r", swmr=True, phony_dims=options["phony_dims"]) as nc:
            stats = xr.open_dataset(xr.backends.H5NetCDFStore(nc.groups["stats"])).load()
    images = ds.sizes.get("time", 0)
    stats = stats.isel(time=slice(0, images))
    if "time" in ds.coords:
        stats = stats.assign_coords(time=ds["time"].values[: stats.sizes.get("time", 0)])
    return xr.merge([ds, stats], combine_attrs="override")

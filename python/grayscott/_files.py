"""Reading run and sweep files as xarray Datasets (grayscott.open)."""

from __future__ import annotations


def _axis_names(ndim: int, sweep: bool) -> tuple[str, ...]:
    names = ("time", "y", "x")
    return (("member",) + names) if sweep else names[3 - ndim:] if ndim < 3 else names


def open_dataset(path: str, **kwargs):
    import xarray as xr

    kwargs.setdefault("engine", "h5netcdf")
    kwargs.setdefault("phony_dims", "access")
    drop = set(kwargs.pop("drop_variables", ()) or ()) | {"matrix"}  # /matrix is /v's second name
    ds = xr.open_dataset(path, drop_variables=sorted(drop), **kwargs)
    sweep = "members" in ds.attrs or ("v" in ds and ds["v"].ndim == 4) or ("u" in ds and ds["u"].ndim == 4)
    renames = {}
    for name in ("u", "v"):
        if name not in ds:
            continue
        wanted = _axis_names(ds[name].ndim, sweep)
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
    return ds

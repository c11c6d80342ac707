"""A test script's scratch folder: a fresh one in the temporary directory, removed when the test
passes and kept (its path printed) when it fails, so that runs of the suite do not fill the disk
with the hundreds of megabytes some tests write."""

import os
import shutil
import tempfile


def enter(prefix: str) -> str:
    """Makes a fresh folder named after `prefix` and makes it the working directory."""
    path = tempfile.mkdtemp(prefix=prefix)
    os.chdir(path)
    return path


def leave(path: str, failed: bool) -> None:
    """Removes the folder after a passing test; names it after a failing one."""
    if failed:
        print(f"the test's files are kept in {path}")
        return
    os.chdir(tempfile.gettempdir())
    shutil.rmtree(path, ignore_errors=True)

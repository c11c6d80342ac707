#!/usr/bin/python3
"""Only regular files are ever replaced: an output (-o, its .xmf, run --render's pictures,
render's pictures and --video) naming a character or block device, a FIFO, a socket or a
directory is refused, with or without --force, before anything is computed, and left as it was;
a symbolic link to a device is replaced by the file, never followed. The test makes its own nodes
(mknod needs root; the block device is skipped, saying so, without it).
Usage: test_special_files.py PATH/TO/grayscott WORK_FOLDER"""

import os
import shutil
import socket
import stat
import subprocess
import sys

grayscott = os.path.abspath(sys.argv[1])
work = os.path.abspath(sys.argv[2])
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
os.chdir(work)

failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
        print("FAIL:", what)


def run(*args):
    return subprocess.run([grayscott, *args], capture_output=True, text=True, timeout=120)


SMALL = ["--rows", "16", "--cols", "16", "--images", "2", "--steps-per-image", "1",
         "--backend", "cpu", "--quiet"]


def make_nodes(folder):
    """Nodes of every kind in `folder`: {name: (path, kind word in the message)}."""
    os.makedirs(folder, exist_ok=True)
    nodes = {}
    char = os.path.join(folder, "char.h5")
    os.mknod(char, 0o666 | stat.S_IFCHR, os.makedev(1, 7))  # what /dev/full is
    nodes["char"] = (char, "character device")
    block = os.path.join(folder, "block.h5")
    try:
        os.mknod(block, 0o666 | stat.S_IFBLK, os.makedev(7, 200))  # a loop device number
        nodes["block"] = (block, "block device")
    except PermissionError:
        print("note: no block device node (mknod needs CAP_MKNOD)")
    fifo = os.path.join(folder, "fifo.h5")
    os.mkfifo(fifo)
    nodes["fifo"] = (fifo, "FIFO")
    sock_path = os.path.join(folder, "socket.h5")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(sock_path)
    nodes["socket"] = (sock_path, "socket")
    nodes["_keep"] = sock  # the socket stays bound while the test runs
    directory = os.path.join(folder, "dir.h5")
    os.mkdir(directory)
    nodes["dir"] = (directory, "directory")
    return nodes


def identity(path):
    st = os.lstat(path)
    return (stat.S_IFMT(st.st_mode), st.st_ino, st.st_rdev)


def refused(r, path, kind, what):
    lines = r.stderr.strip().splitlines()
    check(r.returncode != 0, f"{what}: exit status 0 (stderr: {r.stderr.strip()})")
    check(len(lines) == 1 and lines[0].startswith("grayscott: error:") and kind in lines[0]
          and path in lines[0], f"{what}: expected one error line naming the {kind}, got {lines}")


nodes = make_nodes("nodes")
for name, entry in nodes.items():
    if name.startswith("_"):
        continue
    path, kind = entry
    before = identity(path)
    for force in ([], ["--force"]):
        what = f"run -o {name} {' '.join(force)}".strip()
        r = run("run", *SMALL, "-o", path, *force)
        refused(r, path, kind, what)
        check(identity(path) == before, f"{what}: the {kind} was replaced")
        check(not os.path.exists(os.path.join("nodes", name + ".xmf")),
              f"{what}: an .xmf was written beside the {kind}")
        leftovers = [f for f in os.listdir("nodes") if ".partial-" in f]
        check(not leftovers, f"{what}: temporary files left: {leftovers}")
        what = f"sweep -o {name} {' '.join(force)}".strip()
        r = run("sweep", "--feed", "0.03,0.04", "--kill", "0.06", "--rows", "8", "--cols", "8",
                "--images", "1", "--steps-per-image", "1", "--quiet", "-o", path, *force)
        refused(r, path, kind, what)
        check(identity(path) == before, f"{what}: the {kind} was replaced")

# The companion: run.h5's run.xmf is a FIFO (or a device).
os.makedirs("companion")
os.mkfifo("companion/run.xmf")
before = identity("companion/run.xmf")
for force in ([], ["--force"]):
    r = run("run", *SMALL, "-o", "companion/run.h5", *force)
    refused(r, "companion/run.xmf", "FIFO", f"run with a FIFO as the companion {force}")
    check(identity("companion/run.xmf") == before, "the companion FIFO was replaced")
    check(not os.path.exists("companion/run.h5"), "the run wrote its file beside a FIFO companion")

# A symbolic link to a device is replaced by the new file, never followed.
os.makedirs("linked")
os.mknod("linked/device", 0o666 | stat.S_IFCHR, os.makedev(1, 7))
device_before = identity("linked/device")
os.symlink("device", "linked/out.h5")
r = run("run", *SMALL, "-o", "linked/out.h5", "--force")
check(r.returncode == 0, f"--force over a symlink to a device failed: {r.stderr}")
check(identity("linked/device") == device_before, "--force wrote through a symlink to a device")
check(stat.S_ISREG(os.lstat("linked/out.h5").st_mode), "the symlink was not replaced by the file")

# Pictures: run --render and render, with and without --force.
r = run("run", *SMALL, "-o", "pictures.h5")
check(r.returncode == 0, f"a plain run failed: {r.stderr}")
os.makedirs("shots")
os.mkfifo("shots/v_0001.png")
before = identity("shots/v_0001.png")
for force in ([], ["--force"]):
    r = run("render", "pictures.h5", "--out", "shots", *force)
    refused(r, "shots/v_0001.png", "FIFO", f"render over a FIFO picture {force}")
    check(identity("shots/v_0001.png") == before, "render replaced a FIFO picture")
    check(not os.path.exists("shots/v_0000.png"), "render wrote pictures before refusing")
    r = run("run", *SMALL, "-o", "again.h5", "--force", "--render", "shots", *force)
    refused(r, "shots/v_0001.png", "FIFO", f"run --render over a FIFO picture {force}")
    check(not os.path.exists("again.h5"), "run --render computed before refusing a FIFO picture")
    check(identity("shots/v_0001.png") == before, "run --render replaced a FIFO picture")

# A FIFO given as the pictures' folder, or above it, is named as such (it was called "a file").
os.mkfifo("folder.fifo")
r = run("render", "pictures.h5", "--out", "folder.fifo")
refused(r, "folder.fifo", "is a FIFO, not a folder", "render --out a FIFO")
r = run("render", "pictures.h5", "--out", "folder.fifo/below")
refused(r, "folder.fifo", "cannot be created: folder.fifo is a FIFO", "render --out below a FIFO")

# Videos: render --video naming a device or a FIFO.
os.mknod("video.mp4", 0o666 | stat.S_IFCHR, os.makedev(1, 7))
os.mkfifo("video.gif")
for name, kind in (("video.mp4", "character device"), ("video.gif", "FIFO")):
    before = identity(name)
    for force in ([], ["--force"]):
        r = run("render", "pictures.h5", "--video", name, *force)
        refused(r, name, kind, f"render --video {name} {force}")
        check(identity(name) == before, f"render --video replaced the {kind} {name}")

nodes["_keep"].close()
print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)

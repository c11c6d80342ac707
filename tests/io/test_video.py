#!/usr/bin/env python3
"""`grayscott render --video`, checked with the real clients: ffprobe counts the frames and names
the codec and size of MP4, WebM, GIF and AVI videos of a run file and of a sweep's atlas; ffmpeg decodes
frames that are compared with the PNG pictures of the same images; and the refusals (an existing
video, a wrong name, no ffmpeg, an ffmpeg that fails) leave nothing behind.

Usage: test_video.py GRAYSCOTT WORKDIR. Needs Debian's ffmpeg (ffmpeg, ffprobe) and python3-numpy.
"""
import os
import shutil
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from script_checks import check, finish, work_in  # noqa: E402

GRAYSCOTT = os.path.abspath(sys.argv[1])
WORK = sys.argv[2]
work_in(WORK)
for tool in ("ffmpeg", "ffprobe"):
    if shutil.which(tool) is None:
        print(f"FAIL: {tool} is missing (Debian: apt-get install ffmpeg; scripts/setup does)")
        sys.exit(1)


def run(*args, env=None):
    if args[0] == "render" and "--scale" not in args:
        args = (*args, "--scale", "1")  # the grid's own size: frames compare with the cells
    return subprocess.run([GRAYSCOTT, *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})})


def probe(path):
    """codec, width, height, frames, frame rate of the first video stream."""
    out = subprocess.run(["ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0",
                          "-show_entries", "stream=codec_name,width,height,nb_read_frames,"
                          "r_frame_rate", "-of", "default=noprint_wrappers=1", path],
                         capture_output=True, text=True, check=True).stdout
    fields = dict(line.split("=", 1) for line in out.split())
    return (fields["codec_name"], int(fields["width"]), int(fields["height"]),
            int(fields["nb_read_frames"]), fields["r_frame_rate"])


def decode(path, width, height):
    """Every frame of a video (or the one picture of a PNG) as RGB arrays."""
    raw = subprocess.run(["ffmpeg", "-v", "error", "-i", path, "-f", "rawvideo", "-pix_fmt",
                          "rgb24", "-"], capture_output=True, check=True).stdout
    return np.frombuffer(raw, np.uint8).reshape(-1, height, width, 3).astype(int)


# A run of 63 x 95: odd sizes, which MP4 and WebM pad to even ones.
r = run("run", "--rows", "63", "--cols", "95", "--images", "12", "--steps-per-image", "60",
        "-o", "run.h5", "--quiet")
check(r.returncode == 0, f"the run: {r.stderr}")

r = run("render", "run.h5", "--video", "run.mp4")
check(r.returncode == 0 and "rendered 12 frames into run.mp4" in r.stderr, f"mp4: {r.stderr}")
check(probe("run.mp4") == ("h264", 96, 64, 12, "10/1"), f"mp4 probe: {probe('run.mp4')}")
# Names ffmpeg would read as an option or a protocol are files all the same.
for name in ("-dash.mp4", "colon:name.mp4"):
    r = run("render", "run.h5", "--video", name, "--fps", "10")
    check(r.returncode == 0 and os.path.isfile(name) and probe("./" + name)[3] == 12,
          f"--video {name}: {r.stderr}")
r = run("render", "run.h5", "--video", "run.webm", "--every", "5", "--fps", "4")
check(r.returncode == 0, f"webm: {r.stderr}")
# Images 0, 5, 10 and the last, 11: a video always ends on the last image.
check(probe("run.webm") == ("vp9", 96, 64, 4, "4/1"), f"webm, every 5, 4 fps: {probe('run.webm')}")
r = run("render", "run.h5", "--image", "-1", "--scale", "1", "--out", "last-picture")
check(r.returncode == 0, f"the last picture: {r.stderr}")
last_picture = decode("last-picture/v_0011.png", 95, 63)[0]
last_frame = decode("run.webm", 96, 64)[-1][:63, :95]
check(np.abs(last_frame - last_picture).mean() < 6,
      f"the every-5 video does not end on the last image: {np.abs(last_frame - last_picture).mean()}")
r = run("render", "run.h5", "--video", "run.gif", "--fps", "5")
check(r.returncode == 0, f"gif: {r.stderr}")
codec, width, height, frames, _ = probe("run.gif")
check((codec, frames) == ("gif", 12) and (width, height) in ((95, 63), (96, 64)),
      f"gif probe: {probe('run.gif')}")
r = run("render", "run.h5", "--video", "last.mp4", "--image", "-1")
check(r.returncode == 0 and probe("last.mp4")[3] == 1, "--image -1: a video of one frame")

# The frames are the pictures, in order: each decoded frame is nearest to its own image's PNG.
r = run("render", "run.h5", "--out", "pictures", "--quiet")
check(r.returncode == 0, f"the pictures: {r.stderr}")
pictures = [decode(f"pictures/v_{i:04d}.png", 95, 63)[0] for i in range(12)]
for video, w, h, lossless in (("run.mp4", 96, 64, False), ("run.gif", width, height, True)):
    frames = decode(video, w, h)[:, :63, :95]
    errors = np.array([[np.abs(f - p).mean() for p in pictures] for f in frames])
    nearest = errors.argmin(axis=1)
    check(np.array_equal(nearest, np.arange(12)), f"{video}: frame i shows image i ({nearest})")
    check(errors.diagonal().max() < (4 if lossless else 6),
          f"{video}: frames match their pictures (mean error {errors.diagonal().max():.2f} of 255)")

# A sweep: a video of its atlas, the size of the atlas picture.
r = run("sweep", "--feed", "0.02:0.05:3", "--kill", "0.05:0.065:2", "--rows", "32", "--cols", "32",
        "--images", "6", "--steps-per-image", "100", "-o", "sweep.h5", "--quiet")
check(r.returncode == 0, f"the sweep: {r.stderr}")
r = run("render", "sweep.h5", "--out", "atlas", "--quiet")
atlas_width, atlas_height = [int(x) for x in subprocess.run(
    ["ffprobe", "-v", "error", "-show_entries", "stream=width,height", "-of", "csv=p=0",
     "atlas/atlas.png"], capture_output=True, text=True, check=True).stdout.strip().split(",")]
r = run("render", "sweep.h5", "--video", "atlas.mp4")
check(r.returncode == 0, f"atlas video: {r.stderr}")
codec, w, h, frames, _ = probe("atlas.mp4")
check(codec == "h264" and frames == 6 and (w, h) == (atlas_width + atlas_width % 2,
                                                     atlas_height + atlas_height % 2),
      f"atlas video: {probe('atlas.mp4')}, atlas {atlas_width}x{atlas_height}")
last = decode("atlas.mp4", w, h)[-1][:atlas_height, :atlas_width]
atlas = decode("atlas/atlas.png", atlas_width, atlas_height)[0]
check(np.abs(last - atlas).mean() < 6, "the atlas video's last frame is the atlas picture")
r = run("render", "sweep.h5", "--video", "seed.mp4", "--seed", "9")
check(r.returncode == 2 and "no member with that seed" in r.stderr, f"--seed 9: {r.stderr}")

# Refusals: nothing written, nothing replaced, one line naming the cause.
before = open("run.mp4", "rb").read()
r = run("render", "run.h5", "--video", "run.mp4")
check(r.returncode == 2 and "already exists" in r.stderr and open("run.mp4", "rb").read() == before,
      f"an existing video is kept without --force: {r.stderr}")
r = run("render", "run.h5", "--video", "run.mp4", "--force", "--every", "3")
check(r.returncode == 0 and probe("run.mp4")[3] == 5, "--force replaces the video (0, 3, 6, 9, 11)")
# The Python course's container: MPEG-4 Part 2 in AVI, with the DIVX tag its code writes.
r = run("render", "run.h5", "--video", "run.avi", "--every", "2", "--fps", "24")
check(r.returncode == 0 and "rendered 7 frames into run.avi" in r.stderr, f"avi: {r.stderr}")
check(probe("run.avi") == ("mpeg4", 96, 64, 7, "24/1"), f"avi probe: {probe('run.avi')}")
tag = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
                      "stream=codec_tag_string,pix_fmt", "-of", "default=noprint_wrappers=1",
                      "run.avi"], capture_output=True, text=True, check=True).stdout.split()
check(tag == ["pix_fmt=yuv420p", "codec_tag_string=DIVX"] or
      sorted(tag) == ["codec_tag_string=DIVX", "pix_fmt=yuv420p"], f"avi tag: {tag}")
r = run("render", "run.h5", "--video", "run.mkv")
check(r.returncode == 2 and ".mp4, .webm, .gif or .avi" in r.stderr and
      not os.path.exists("run.mkv"), f"an unknown container: {r.stderr}")
r = run("render", "run.h5", "--video", "none.mp4", env={"GRAYSCOTT_FFMPEG": "/nonexistent/ffmpeg"})
check(r.returncode == 2 and "GRAYSCOTT_FFMPEG" in r.stderr and not os.path.exists("none.mp4"),
      f"no ffmpeg: {r.stderr}")
r = run("render", "run.h5", "--video", "failed.mp4", env={"GRAYSCOTT_FFMPEG": "/bin/false"})
check(r.returncode == 1 and "ffmpeg" in r.stderr and len(r.stderr.strip().splitlines()) == 1,
      f"an ffmpeg that fails: one line, exit 1: {r.stderr}")
check(not [n for n in os.listdir(".") if n.startswith("failed.mp4")],
      f"a failed encoding leaves no file: {os.listdir('.')}")
r = run("render", "run.h5", "--video", "x.mp4", "--every", "0")
check(r.returncode == 2 and "every" in r.stderr, f"--every 0: {r.stderr}")

# A long render on a terminal shows a progress bar; --quiet says nothing.
if shutil.which("script"):
    tty = subprocess.run(["script", "-qec", f"{GRAYSCOTT} render run.h5 --video tty.mp4",
                          "/dev/null"], capture_output=True, text=True)
    check("image 12/12" in tty.stdout, f"a progress bar on a terminal: {tty.stdout[-200:]!r}")
r = run("render", "run.h5", "--video", "quiet.mp4", "--quiet")
check(r.returncode == 0 and r.stderr == "", f"--quiet: {r.stderr!r}")

finish("videos of runs and sweeps, as ffprobe and ffmpeg read them")

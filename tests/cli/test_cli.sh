#!/usr/bin/env bash
# End-to-end tests of the grayscott command line, as a user meets it: help, version, a small run
# read back with h5py, config files, pictures, and every bad input getting one clear line.
# Usage: test_cli.sh PATH/TO/grayscott
set -u
gs=$(realpath "$1")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
passed=0 failed=0
pass() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL: $*"; }

# expect_error "what must appear in the message" ARGS...: non-zero exit, exactly one line on
# stderr starting "grayscott: error:", nothing on stdout.
expect_error() {
  local want=$1; shift
  timeout 60 "$gs" "$@" >out.txt 2>err.txt
  local rc=$?
  local lines; lines=$(wc -l <err.txt)
  if [[ $rc -ne 0 && $lines -eq 1 && ! -s out.txt ]] && grep -q '^grayscott: error: ' err.txt &&
     grep -qF -- "$want" err.txt; then
    pass
  else
    fail "grayscott $* -> rc=$rc, stderr: $(cat err.txt) (wanted: $want)"
  fi
}

small=(--rows 24 --cols 40 --images 3 --steps-per-image 5 --backend cpu)

# Help and version.
"$gs" --help | grep -q "run" && pass || fail "--help does not list run"
"$gs" run --help | grep -q -- "--nbrow" && pass || fail "run --help lacks the course's aliases"
"$gs" --version | grep -qE '^grayscott [0-9]+\.[0-9]+\.[0-9]+$' && pass || fail "--version"

# A small run: nothing on stdout, a summary line on stderr, the file readable by h5py.
"$gs" run "${small[@]}" -o run.h5 >out.txt 2>err.txt && pass || fail "small run failed: $(cat err.txt)"
[[ ! -s out.txt ]] && pass || fail "run printed on stdout"
grep -q "wrote 3 images of 24x40" err.txt && pass || fail "no summary line: $(cat err.txt)"
[[ -f run.xmf ]] && pass || fail "no XDMF file beside the output"
expect_error "run.xmf is the XDMF companion of run.h5, which holds the images: give run.h5" \
  render run.xmf --out none
# A continued run's summary counts what it wrote itself (and which images those were).
timeout -s INT 0.7 "$gs" run --rows 64 --cols 64 --images 60 --steps-per-image 20000 \
  --checkpoint-every 1 --backend cpu --quiet -o part.h5 2>/dev/null
"$gs" run --resume part.h5 --backend cpu 2>resumed.txt &&
  grep -qE "^wrote ([0-9]+) images of 64x64 .* to part.h5 \(images [0-9]+ to 60 of 60\)" resumed.txt &&
  pass || fail "a continued run's summary: $(cat resumed.txt)"
# `timeout -s INT` delivers its SIGINT twice (to the command, then to its process group): that
# is one interrupt, which stops at the image boundary, not a second Ctrl-C that exits at once.
for try in 1 2 3; do
  rm -f twice.h5 twice.xmf
  timeout -s INT 0.5 "$gs" run --rows 64 --cols 64 --images 20 --steps-per-image 100000 \
    --backend cpu --quiet -o twice.h5 2>/dev/null
  /usr/bin/python3 -c '
import h5py; s = h5py.File("twice.h5", "r").attrs["status"]
assert s.startswith("interrupted by SIGINT after image"), s' && pass ||
    fail "timeout -s INT, try $try: the run did not stop at an image boundary"
done
# A stop signal says at once that the run stops after the image in progress (an image may take
# long), then how it ended.
timeout -s TERM 0.7 "$gs" run --rows 64 --cols 64 --images 60 --steps-per-image 20000 \
  --backend cpu -o announced.h5 2>err.txt
[[ $(grep -c "^grayscott: SIGTERM: stopping after the image in progress$" err.txt) -eq 1 ]] &&
  grep -q "interrupted by SIGTERM after image" err.txt && pass ||
  fail "a stop signal's notice: $(cat err.txt)"
# A run that was to draw its pictures once it ended names --render in the command that continues
# it (the pictures are drawn only then), and that command draws every image.
timeout -s TERM 0.7 "$gs" run --rows 64 --cols 64 --images 20 --steps-per-image 100000 \
  --backend cpu -o drawn.h5 --render drawn-pics 2>err.txt
grep -q "continue with: grayscott run --resume drawn.h5 --render drawn-pics$" err.txt &&
  [[ ! -e drawn-pics ]] && pass || fail "a stopped run --render's hint: $(cat err.txt)"
"$gs" run --resume drawn.h5 --render drawn-pics --backend cpu --quiet &&
  [[ $(ls drawn-pics | wc -l) -eq 20 ]] && pass || fail "the hint's command: $(ls drawn-pics)"
# Pictures that exist are refused for a continued run too, and its --force replaces them (only
# them: without --render it is refused); a stopped run --render --force says --force again.
timeout -s TERM 0.7 "$gs" run --rows 64 --cols 64 --images 20 --steps-per-image 100000 \
  --backend cpu -o drawn2.h5 --render drawn-pics --force 2>err.txt
grep -q "continue with: grayscott run --resume drawn2.h5 --render drawn-pics --force$" err.txt &&
  pass || fail "a stopped run --render --force's hint: $(cat err.txt)"
expect_error "drawn-pics/v_0000.png and 19 more pictures exist (--force replaces them)" \
  run --resume drawn2.h5 --render drawn-pics
expect_error "--force with --resume replaces only the pictures of --render DIR (a continued run's file is continued, never replaced)" \
  run --resume drawn2.h5 --force
inode=$(stat -c %i drawn-pics/v_0000.png)  # a picture replaced is a new file put in its place
"$gs" run --resume drawn2.h5 --render drawn-pics --force --backend cpu --quiet &&
  [[ $(ls drawn-pics | wc -l) -eq 20 && $(stat -c %i drawn-pics/v_0000.png) != "$inode" ]] &&
  /usr/bin/python3 -c '
import h5py; assert h5py.File("drawn2.h5", "r").attrs["status"] == "complete"' &&
  pass || fail "run --resume --render --force"
# Options that contradict the continued file are refused, and leave it as it was.
timeout -s INT 0.7 "$gs" run --rows 64 --cols 64 --images 60 --steps-per-image 20000 \
  --checkpoint-every 1 --backend cpu --quiet -o stopped.h5 2>/dev/null
cp stopped.h5 stopped-before.h5
# A stencil is named as it was given, not by its nine weights.
expect_error "--stencil five-point contradicts stopped.h5, whose run has oono-puri (a continued run keeps its parameters)" \
  run --resume stopped.h5 --stencil five-point
expect_error "--stats contradicts stopped.h5, whose run measured no statistics (a continued run keeps its parameters)" \
  run --resume stopped.h5 --stats
expect_error "--until-steady 0.001 contradicts stopped.h5, whose run has no --until-steady" \
  run --resume stopped.h5 --until-steady 1e-3
expect_error "--histogram-bins 7 contradicts stopped.h5, whose run measured no statistics" \
  run --resume stopped.h5 --histogram-bins 7
expect_error "--classify contradicts stopped.h5, whose run classified nothing" \
  run --resume stopped.h5 --classify
expect_error "--pattern with --resume: a continued run keeps the parameters of its file" \
  run --resume stopped.h5 --pattern worms
expect_error "--preset with --resume: a continued run keeps the parameters of its file" \
  run --resume stopped.h5 --preset adios2
# A file another program holds open (HDF5 readers take a shared lock: h5py, xarray, ParaView) is
# not continued, and the message says why rather than HDF5's "Resource temporarily unavailable".
# (The lock taken by this shell itself, held until its descriptor closes.)
exec {held}<stopped.h5
flock -s "$held"
expect_error "the file is open elsewhere: another grayscott starting on it, or a reader such as h5py, xarray, gs.open or ParaView that holds it" \
  run --resume stopped.h5
exec {held}<&-
cmp -s stopped.h5 stopped-before.h5 && pass || fail "a refused --resume changed the file"
# --outside under --resume is compared with the file's, whose boundary is the one that counts.
timeout -s INT 0.7 "$gs" run --rows 64 --cols 64 --images 60 --steps-per-image 20000 \
  --boundary fixed --outside 0.5,0.5 --backend cpu --quiet -o fixed-stopped.h5 2>/dev/null
expect_error "--outside 0.25,0.25 contradicts fixed-stopped.h5, whose run has 0.5,0.5" \
  run --resume fixed-stopped.h5 --outside 0.25,0.25
# An empty name is a mistake, not "no file": no run of the defaults starts.
expect_error "resume: the file name is empty" run --resume "" "${small[@]}" -o empty-resume.h5
expect_error "resume: the file name is empty" sweep --resume "" --feed 0.03 --kill 0.06 -o empty.h5
expect_error "config: the file name is empty" run --config "" "${small[@]}" -o empty-config.h5
expect_error "config . is a directory, not a TOML file" run --config . "${small[@]}" -o dir-config.h5
[[ ! -e empty-resume.h5 && ! -e empty-config.h5 && ! -e dir-config.h5 ]] && pass ||
  fail "a refused run wrote its output"
expect_error "images x steps-per-image must be at most 2^53 steps, got 2 x 9007199254740992" \
  run "${small[@]}" --images 2 --steps-per-image 9007199254740992
mkdir -p a-folder
expect_error "a-folder is a directory, not a file" info a-folder
# A damaged file: what is wrong with it, not a guess (a file cut short in plain words).
head -c 20000 run.h5 >truncated.h5
expect_error "truncated.h5 is cut short: 20000 bytes of the" info truncated.h5
/usr/bin/python3 -c '
data = bytearray(open("run.h5", "rb").read())
data[100:400] = bytes((i * 37 + 11) % 256 for i in range(300))
open("scrambled.h5", "wb").write(data)'
expect_error "HDF5: cannot read the attributes of scrambled.h5: incorrect metadata checksum" info scrambled.h5
expect_error "--every is a video's option: give --video NAME.mp4" render run.h5 --every 2 --out every
# --print-config prints only what runs: the same options are refused there.
expect_error "--every is a video's option: give --video NAME.mp4" render run.h5 --every 2 --print-config
expect_error "range: expected LO:HI" render run.h5 --range 1:0 --print-config
"$gs" render run.h5 --print-config >printed.txt 2>&1 && grep -qx "# not given: the default" printed.txt &&
  pass || fail "render --print-config: $(cat printed.txt)"
expect_error "video: the file name is empty" render run.h5 --video ""
expect_error "--out names the pictures' folder: a video is written where --video names it" \
  render run.h5 --video outed.mp4 --out outed
[[ ! -e outed && ! -e outed.mp4 ]] && pass || fail "render --video --out wrote something"
expect_error "output: '-' would be a file named '-'" run --rows 8 --cols 8 --images 1 -o -
[[ ! -e - && ! -e -.xmf ]] && pass || fail "-o - wrote a file named '-'"
# info names a sweep's members that became non-finite, as the sweep warned of them.
"$gs" sweep --rows 64 --cols 64 --images 20 --dt 4.4 --feed 0.01,0.05 -o nonfinite.h5 --quiet \
  2>/dev/null
"$gs" info nonfinite.h5 >info.txt 2>&1 &&
  grep -qx "non-finite: 1 of 2 members, the first member 0 (feed 0.01, kill 0.054) at image 0 (/nonfinite_image)" info.txt &&
  pass || fail "info of a sweep with a non-finite member: $(cat info.txt)"
# Annotations without a font say so, for a run's pictures as for a sweep's atlas.
GRAYSCOTT_FONT=/nonexistent "$gs" render run.h5 --out fontless --annotate --image 0 2>err.txt &&
  grep -q "^grayscott: warning: no usable font for the annotations" err.txt && pass ||
  fail "render --annotate without a font: $(cat err.txt)"
/usr/bin/python3 - run.h5 <<'PY' && pass || fail "h5py read-back"
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], "r")
assert f["v"].shape == (3, 24, 40) and f["v"].dtype == np.float32
assert np.array_equal(f["matrix"][...], f["v"][...])
assert list(f["step"][...]) == [5, 10, 15]
assert f.attrs["rows"] == 24 and f.attrs["cols"] == 40 and f.attrs["boundary"] == "zero-flux"
assert f.attrs["stencil"].shape == (9,) and f.attrs["status"] == "complete"
assert np.isfinite(f["v"][...]).all() and f["v"][2].max() > 0.1
PY

# --quiet: nothing at all.
"$gs" run "${small[@]}" -o quiet.h5 --quiet >out.txt 2>err.txt
[[ ! -s out.txt && ! -s err.txt ]] && pass || fail "--quiet printed something"

# On a terminal, a progress bar on stderr.
if command -v script >/dev/null; then
  script -qec "$gs run ${small[*]} -o tty.h5 >/dev/null" /dev/null >tty.txt 2>&1
  grep -q "image 3/3" tty.txt && pass || fail "no progress bar on a terminal: $(cat tty.txt)"
else
  fail "no 'script' to give a run a terminal, so the progress bar goes unchecked: install bsdutils (scripts/setup)"
fi

# An existing output is kept unless --force.
cp run.h5 before.h5
expect_error "already exists" run "${small[@]}" -o run.h5
cmp -s run.h5 before.h5 && pass || fail "an existing output was modified"
"$gs" run "${small[@]}" -o run.h5 --force --quiet && pass || fail "--force did not overwrite"
# run.hdf5 would share run.h5's companion run.xmf: refused, --force or not, run.xmf kept.
cp run.xmf before.xmf
expect_error "output companion run.xmf may be run.h5's" run "${small[@]}" -o run.hdf5 --force
cmp -s run.xmf before.xmf && [[ ! -e run.hdf5 ]] && pass || fail "run.hdf5 took run.h5's companion"

# Config files: keys are long option names, the command line wins.
cat >run.toml <<'TOML'
rows = 32
cols = 48
images = 2
steps-per-image = 4
boundary = "periodic"
fields = ["u", "v"]
quiet = true
TOML
"$gs" run --config run.toml --rows 16 -o cfg.h5 --backend cpu && pass || fail "config run failed"
/usr/bin/python3 -c '
import h5py; f = h5py.File("cfg.h5", "r")
assert f["u"].shape == (2, 16, 48), f["u"].shape
assert f.attrs["boundary"] == "periodic"' && pass || fail "config values or override wrong"
printf 'rows = 32\nsteps = 4\n' >unknown.toml
expect_error "line 2, key 'steps': unknown key" run --config unknown.toml -o x.h5
printf 'rows = [1,\n' >broken.toml
expect_error "config broken.toml line" run --config broken.toml -o x.h5
expect_error "config missing.toml: No such file or directory" run --config missing.toml -o x.h5
# A config from a pipe (a shell's <(...), standard input), which has no size to ask.
"$gs" run --config <(printf 'rows = 8\ncols = 8\nimages = 1\n') -o piped.h5 --quiet &&
  printf 'rows = 8\ncols = 8\nimages = 1\n' |
  "$gs" run --config /dev/stdin -o piped-stdin.h5 --quiet && [[ -s piped.h5 && -s piped-stdin.h5 ]] &&
  pass || fail "a --config from a pipe"
# --print-config of a continued run shows its file's parameters (it showed the defaults, 1080 x
# 1920 for a run of 64 x 48), and what it prints runs.
timeout -s TERM 1 "$gs" run --rows 64 --cols 48 --images 300 --steps-per-image 3000 --init noise \
  --seed 7 -o print-continued.h5 --quiet 2>/dev/null
"$gs" run --resume print-continued.h5 --print-config >print-continued.toml &&
  grep -qx "# rows = 64" print-continued.toml && grep -qx "# cols = 48" print-continued.toml &&
  grep -qx "# seed = 7" print-continued.toml &&
  grep -qx '# output = "print-continued.h5"' print-continued.toml &&
  pass || fail "--print-config of a continued run: $(cat print-continued.toml)"
# A name with a newline, quotes or a backslash is printed as TOML reads it back (a newline broke
# the file).
"$gs" run -o $'new\nline "q" \\.h5' "${small[@]}" --print-config >newline.toml &&
  "$gs" run --config newline.toml --quiet && [[ -f $'new\nline "q" \\.h5' ]] &&
  pass || fail "--print-config of a name with a newline: $(cat newline.toml)"
# --print-config checks what it prints: a benchmark of 0 repeats was printed.
expect_error "repeat must be a positive integer" bench --repeat 0 --print-config
# An option where a value was due (-o --force: the name forgotten) made a file named "--force".
expect_error "--output: '--force' is an option of run, not a value" run "${small[@]}" -o --force
expect_error "--out: '--scale=2' is an option of render, not a value" render run.h5 --out --scale=2
[[ ! -e --force ]] && pass || fail "-o --force made a file named --force"
# An empty file name (a script's empty variable) is said as such, not as a file "" not found.
for command in render repair info; do
  expect_error "$command: the file name is empty" "$command" ""
done
# A device is no file of options, nor a pipe that never ends (/dev/zero grew to gigabytes).
expect_error "config /dev/zero is a character device, not a TOML file" run --config /dev/zero
expect_error "holds more than 1 MiB: not a file of options" run --config <(yes 'rows = 8')

# A value the request refuses later is traced back to its line; the command line's is not.
printf 'cols = 16\n[run]\nrows = -32\n' > negative.toml
expect_error "rows must be a positive integer (config negative.toml line 3, key 'run.rows')" \
  run --config negative.toml -o x.h5
expect_error "rows must be a positive integer" run --config negative.toml --rows -3 -o x.h5
! grep -q "negative.toml" err.txt && pass || fail "a command line value blamed on the config: $(cat err.txt)"
printf 'print-config = true\n' > printing.toml
expect_error "key 'print-config': unknown key (--print-config is asked for on the command line)" \
  run --config printing.toml -o x.h5
expect_error "--config given 2 times; it takes one value" run --config run.toml --config run.toml
# Every unknown key at once, in the file's order, with the nearest option where there is one.
printf 'velocity = 3\nrows = 8\ncolour = 1\n[run]\nimags = 2\n' >unknowns.toml
expect_error "config unknowns.toml line 1, key 'velocity': unknown key; line 3, key 'colour': unknown key; line 5, key 'run.imags': unknown key (did you mean images?)" \
  run --config unknowns.toml -o x.h5
# Values of the wrong kind among them too, each at its line.
printf 'rows = 16\ncolls = 64\nimages = "3"\nkil = 0.06\n' >mixed.toml
expect_error "config mixed.toml line 2, key 'colls': unknown key (did you mean cols?); line 3, key 'images': expected a whole number (without quotes), got a string; line 4, key 'kil': unknown key (did you mean kill?)" \
  run --config mixed.toml -o x.h5
# A number where a name is due is a value of the wrong kind as well, told with the others.
printf 'fed = 0.02\nboundary = 5\n[run]\nimags = 3\n' >kinds.toml
expect_error "config kinds.toml line 1, key 'fed': unknown key (did you mean feed?); line 2, key 'boundary': expected a name in quotes (zero-flux|periodic|fixed), got an integer; line 4, key 'run.imags': unknown key (did you mean images?)" \
  run --config kinds.toml -o x.h5
# --print-config names every option: one not given and without a default is said to be unset.
"$gs" run --print-config >printed.txt && grep -qx "# seed: not set" printed.txt &&
  grep -qx "# pattern: not set" printed.txt && pass || fail "print-config's unset options: $(cat printed.txt)"
# A top-level key, shared by the commands, may be another command's option misspelt.
printf 'colourmap = "viridis"\n' >shared.toml
expect_error "key 'colourmap': unknown key (did you mean colormap, an option of render?)" \
  run --config shared.toml -o x.h5
# Another command's section is read by that command, but its keys are checked by any: a misspelt
# [render] key is told by the run, not only when render runs. A command that reads no config file
# (info) has no section.
printf '[run]\nrows = 8\n[render]\ncolourmap = "viridis"\nout = "pics"\n' >sections.toml
expect_error "config sections.toml line 4, key 'render.colourmap': not an option of render (did you mean colormap?)" \
  run --config sections.toml -o x.h5
printf '[render]\ncolormap = "viridis"\n[sweep]\nfeed = [0.02, 0.03]\n[run]\nrows = 8\ncols = 8\nimages = 1\n' >others.toml
"$gs" run --config others.toml -o others.h5 --quiet && pass || fail "other commands' valid sections refused"
printf '[info]\n[run]\nrows = 8\n' >info-section.toml
expect_error "key 'info': unknown section (the sections are run, render, sweep, bench, the commands that read a config file)" \
  run --config info-section.toml -o x.h5
# An option given twice, or under its name and its course alias: the later value wins.
"$gs" run --rows 8 --cols 8 --nbimage 5 --images 3 --quiet -o later.h5 &&
  /usr/bin/python3 -c 'import h5py; assert h5py.File("later.h5", "r")["v"].shape[0] == 3' &&
  pass || fail "--nbimage 5 --images 3 did not take the later value"

# Bad input: one clear line each, nothing computed.
expect_error "unknown option --nbrows (did you mean --nbrow?)" run --nbrows
expect_error "unknown option --imags (did you mean --images?)" run --imags 10
# Options after "--" are arguments: said so, rather than CLI11's list of them in reverse order.
expect_error "'-o' comes after '--', which ends the options: give run's options before it" \
  run "${small[@]}" -- -o after-dashes.h5
expect_error "'--feed' comes after '--', which ends the options: give sweep's options before it" \
  sweep --kill 0.06 -- --feed 0.03
expect_error "unexpected argument 'after-dashes.h5'" run "${small[@]}" -- after-dashes.h5
[[ ! -e after-dashes.h5 ]] && pass || fail "a run with options after -- wrote a file"
expect_error "fields: expected v, u or u,v, got 'u,v,u'" run --fields u,v,u -o never.h5
expect_error "options go after the command: grayscott run --rows 5 --cols 8" --rows 5 run --cols 8
# A whole number past 64 bits is out of range: it was read as 2^63-1 and reported as given
# ("got 9223372036854775807 x 32"), or (bench --warmup) ran for ever.
expect_error "--images: '99999999999999999999' is out of range (at most 2^63-1)" \
  run --images 99999999999999999999 -o huge.h5
expect_error "--threads: '-99999999999999999999' is out of range (at least -2^63)" \
  run --threads -99999999999999999999 -o huge.h5
expect_error "warmup x steps-per-image must be at most 2^53 steps, got 9223372036854775807 x 32" \
  bench --rows 8 --cols 8 --warmup 9223372036854775807
expect_error "device must be a whole number from 0 to 2147483647, got 9223372036854775807" \
  run --device 9223372036854775807 -o huge.h5
# A number past float64's range is a number out of range, not "not a number".
expect_error "outside: '1e400' is out of range for a float64" run --rows 8 --cols 8 --images 1 \
  --boundary fixed --outside 1e400,0 -o never.h5
expect_error "feed: '1e400' is out of range for a float64" sweep --rows 8 --cols 8 --images 1 \
  --feed 0.01,1e400 -o never.h5
# A name that is all extension names no file; an extension in capitals is one.
expect_error "output .h5: the name is all extension" run --rows 8 --cols 8 --images 1 -o .h5
expect_error "video .mp4: the name is all extension" render run.h5 --video .mp4
"$gs" run --rows 8 --cols 8 --images 1 -o CAPS.H5 2>err.txt && ! grep -q "does not end" err.txt &&
  [[ -s CAPS.H5 && -s CAPS.xmf ]] && pass || fail "-o CAPS.H5: $(cat err.txt)"
# Another program's HDF5 file is not taken for a run's.
/usr/bin/python3 -c "import h5py; h5py.File('foreign.h5', 'w')['x'] = [1, 2]"
expect_error "foreign.h5 is not a grayscott sweep file (no attribute kind)" sweep --resume foreign.h5
# A name that begins an option is taken for it before a slip: --out is --output, not --du.
expect_error "unknown option --out (did you mean --output?)" run --out x.h5
expect_error "unknown option --steps (did you mean --steps-per-image?)" run --steps 10
expect_error "unknown option --output (did you mean --out?)" render run.h5 --output pics
expect_error "unknown option -o (did you mean --out?)" render run.h5 -o pics
expect_error "rows must be a positive integer" run --rows 0
expect_error "cols must be a positive integer" run --cols -5
expect_error "--rows: expected a whole number, got 'ten'" run --rows ten
expect_error "--rows: expected a whole number, got '1e9'" run --rows 1e9
expect_error "--images: expected a whole number, got '2.5'" run --images 2.5
# A preset's stencil on a grid of the other kind is refused naming the preset (the plane's was
# replaced by a volume's without a word; the volume's was refused as if the user had given it).
expect_error "preset adios2 steps a volume (stencil seven-point): --depth 1 makes a plane" \
  run --preset adios2 --depth 1 --rows 16 --cols 16 -o preset-plane.h5
expect_error "preset course-numpy steps a plane (stencil five-point): --depth 8 makes a volume" \
  run --preset course-numpy --depth 8 --rows 16 --cols 16 -o preset-volume.h5
expect_error "stencil: unknown stencil 'sevenpoint' (known: oono-puri" run --stencil sevenpoint
# The options of a run over MPI ranks, given to one process, are refused, not ignored.
if "$gs" run --help | grep -q -- --halo-depth; then  # a build with MPI
  for option in "--halo-depth 5" "--overlap-writes on" "--gpu-aware-mpi on"; do
    name=${option%% *}; expect_error "${name#--}: an option of a run over MPI ranks" run $option --rows 8 --cols 8 -o one.h5
  done
  # At their defaults they ask for nothing (a config written from --print-config's comments).
  "$gs" run --halo-depth 0 --overlap-writes auto --gpu-aware-mpi auto --decomposition 1x1 \
    --rows 8 --cols 8 --images 1 --quiet -o defaults.h5 && pass ||
    fail "the MPI options at their defaults are refused without a launcher"
  # A decomposition to one process: a malformed one named as such, a split of more than one rank
  # refused, and the one process's whole grid only in its own form (a volume's is PxRxC).
  expect_error "decomposition: expected ROWSxCOLS of ranks (e.g. 2x2), or a volume's PLANESxROWSxCOLS (e.g. 2x1x1), got 'axbxc'" \
    run --decomposition axbxc --rows 8 --cols 8 -o one.h5
  expect_error "decomposition 2x1 needs an MPI launcher (mpirun -n P, srun)" \
    run --decomposition 2x1 --rows 8 --cols 8 -o one.h5
  expect_error "decomposition 1x1: a volume (5x11x17) is split PLANESxROWSxCOLS of ranks" \
    run --decomposition 1x1 --depth 5 --rows 11 --cols 17 -o one.h5
  expect_error "decomposition 1x1x1: a plane (8x8) is split ROWSxCOLS of ranks" \
    run --decomposition 1x1x1 --rows 8 --cols 8 -o one.h5
  "$gs" run --decomposition 1x1x1 --depth 5 --rows 11 --cols 17 --images 1 --quiet -o one-volume.h5 &&
    pass || fail "a volume's 1x1x1 to one process is refused"
  # Given twice, the later wins, as for every option of run.
  "$gs" run --halo-depth 5 --halo-depth 0 --rows 8 --cols 8 --images 1 --quiet -o halo-twice.h5 &&
    pass || fail "--halo-depth given twice is refused"
fi
# A volume of many small planes, continued: its memory checked for the file's grid, not for its
# depth of the default 1080x1920 planes (1500 of them: 99 GiB).
timeout -s INT 1 "$gs" run --depth 1500 --rows 4 --cols 4 --images 3000 --steps-per-image 20 \
  --backend cpu --quiet -o deep-stopped.h5 2>/dev/null
"$gs" run --resume deep-stopped.h5 --quiet 2>err.txt && pass ||
  fail "the resume of a deep volume of small planes: $(cat err.txt)"
# "--output=" with nothing after it: refused, not given the next argument as its value.
expect_error "--output= has an empty value" run --rows 8 --cols 8 --images 1 --output= --force
[[ ! -e --force ]] && pass || fail "--output= wrote a file named --force"
# -o=NAME would name the file "=NAME": refused, with the way to write it.
expect_error "-o=eq.h5: a short option takes its value after a space (-o eq.h5); -o=eq.h5 would name it '=eq.h5'" \
  run --rows 8 --cols 8 --images 1 -o=eq.h5
[[ ! -e =eq.h5 ]] && pass || fail "-o=eq.h5 wrote =eq.h5"
expect_error "unknown command 'reapir' (did you mean repair?)" reapir run.h5
# A name near the system's 255-byte limit: its temporary names (the file's, the .xmf's) fit too.
long_name=$(printf 'n%.0s' {1..250}).h5
"$gs" run --rows 8 --cols 8 --images 1 --quiet -o "$long_name" && [[ -f ${long_name%.h5}.xmf ]] &&
  pass || fail "a 253-byte output name"
# A stop signal while the options are read (a config from a FIFO blocks) ends the process at once:
# timeout's SIGTERM suffices (124), its SIGKILL 5 s later is not needed (137).
mkfifo config.fifo
timeout -k 5 1 "$gs" run --config config.fifo --rows 8 --cols 8 -o fifo.h5 2>/dev/null
[[ $? -eq 124 && ! -e fifo.h5 ]] && pass || fail "SIGTERM while reading a config from a FIFO"
# --print-config prints a run that reads back: a contradiction is refused, not printed.
expect_error "outside: the values beyond the edge are the fixed boundary's" \
  run --rows 16 --boundary periodic --outside 0.5,0.1 --print-config
# Its comments show the values the run uses: a preset's, a pattern's and the depth's choices in
# place of the defaults, a value given on the command line as a key; and what it prints reads back
# to the same settings.
"$gs" run --preset course-numba --stencil pretty --print-config >preset.toml 2>&1 &&
  grep -qx '# feed = 0.0565' preset.toml && grep -qx '# boundary = "fixed"' preset.toml &&
  grep -qx '# init = "box-bordered"' preset.toml && grep -qx '# steps-per-image = 34' preset.toml &&
  grep -qx 'stencil = "pretty"' preset.toml && grep -qx '# du = 0.1' preset.toml &&
  pass || fail "--print-config with a preset: $(cat preset.toml)"
"$gs" run --pattern worms --feed 0.07 --print-config >pattern.toml 2>&1 &&
  grep -qx 'feed = 0.07' pattern.toml && grep -qx '# kill = 0.061' pattern.toml &&
  "$gs" run --depth 8 --print-config | grep -qx '# stencil = "seven-point"' &&
  pass || fail "--print-config with a pattern or a depth: $(cat pattern.toml)"
"$gs" run --config preset.toml --print-config >preset-again.toml 2>&1 &&
  cmp -s preset.toml preset-again.toml && pass ||
  fail "--print-config read back: $(diff preset.toml preset-again.toml)"
# info tells the course's programs apart: the values beyond a fixed boundary and inside the start.
"$gs" run --preset course-cupy --rows 16 --cols 16 --images 1 --quiet -o cupy-info.h5 &&
  "$gs" info cupy-info.h5 >info.txt && grep -q "boundary fixed (outside u,v = 0,0)" info.txt &&
  grep -q "initial state: box, u 0.7 and v 0.25 inside" info.txt && pass ||
  fail "info of a course-cupy run: $(cat info.txt)"
# bench writes only what it is asked to, never over a file without --force, and once per machine.
cp run.h5 victim.h5
expect_error "output victim.h5 already exists (use --force to overwrite)" \
  bench --preset quick --rows 16 --cols 16 --io hdf5 -o victim.h5
cmp -s run.h5 victim.h5 && pass || fail "bench -o changed an existing file"
expect_error "--output is written only with --io hdf5" bench --preset quick --rows 16 --cols 16 -o b.h5
[[ "$("$gs" bench --preset quick --rows 16 --cols 16 --images 5 --images 2 --repeat 1 --json |
      python3 -c 'import json, sys; print(json.load(sys.stdin)["images"])')" == 2 ]] && pass ||
  fail "bench --images given twice does not take the later"
# A continued volume is checked against its own grid: its stencil named again is no contradiction.
timeout -s INT 1 "$gs" run --depth 16 --rows 16 --cols 16 --images 100000 --threads 1 --quiet \
  -o volume-stopped.h5 2>/dev/null
expect_error "--stencil nineteen-point contradicts volume-stopped.h5, whose run has seven-point" \
  run --resume volume-stopped.h5 --stencil nineteen-point
expect_error "--images 3 contradicts volume-stopped.h5" \
  run --resume volume-stopped.h5 --stencil seven-point --images 3
# A grid under 8 cells a side is drawn at the largest scale, not refused for the one chosen for it.
"$gs" run --depth 3 --rows 4 --cols 5 --images 1 --steps-per-image 1 --quiet -o tiny.h5 &&
  "$gs" render tiny.h5 --out tiny 2>/dev/null && [[ -f tiny/v_0000.png ]] && pass ||
  fail "render of a 4x5 grid"
# Messages that name the real cause: a size past 16 EiB, an option begun, a course alias as a
# config key, a float where a whole number is due, an empty seed list.
expect_error "needs over 16 EiB of host memory" \
  run --depth 2147483647 --rows 2147483647 --cols 2147483647 --images 1 -o huge.h5
expect_error "unknown option --proj (did you mean --projection?)" render run.h5 --proj max
expect_error "scale: expected auto or a whole number from 1 to 64, got '0'" render run.h5 --scale 0
expect_error "run.h5 holds a plane (depth 1): a slice or a projection picks a view of a volume" \
  render run.h5 --slice z=0 --out plane-slice
printf '[run]\nnbrow = 40\n' >alias.toml
expect_error "key 'run.nbrow': unknown key (did you mean rows?)" run --config alias.toml
printf 'depth = 4.0\n' >float.toml
expect_error "key 'depth': expected a whole number (without quotes), got a float" run --config float.toml
# A key the command line overrides is checked all the same: the file is wrong either way.
expect_error "key 'depth': expected a whole number (without quotes), got a float" \
  run --config float.toml --depth 1
expect_error "seeds: no value given" sweep --init noise --seeds "" --rows 8 --cols 8 -o no-seeds.h5
# A seed is a whole number in a file as on the command line (a string or 1e3 ran with it); a file
# or folder is one name (an array became the file "a.h5,b.h5").
printf '[run]\ninit = "noise"\nseed = "128"\n' >seed-text.toml
expect_error "key 'run.seed': expected a whole number (without quotes), got a string" \
  run --config seed-text.toml "${small[@]}" -o seed-text.h5
printf 'seed = 1e3\n' >seed-float.toml
expect_error "key 'seed': expected a whole number (without quotes), got a float" \
  run --config seed-float.toml --init noise "${small[@]}" -o seed-float.h5
# A histogram's edges must be distinct numbers in the run's precision: -1e39,1e39 put every v in
# the last bin, -1e-50,0 most of them in the first.
for range in -1e39,1e39 -1e308,1e308 -1e-50,0 1,1.0000001; do
  expect_error "in 4 bins: the edges are not distinct single-precision numbers" \
    run "${small[@]}" --stats --histogram-bins 4 "--histogram-range=$range" -o wide.h5
done
# In double precision a range of float64's steps is binned (as numpy would).
"$gs" run "${small[@]}" --precision double --stats --histogram-bins 1000000 \
  --histogram-range 0.2,0.3 -o fine.h5 --quiet && pass || fail "a fine double-precision histogram"
printf '[run]\noutput = ["a.h5", "b.h5"]\n[render]\nout = ["x", "y"]\n' >names.toml
expect_error "key 'run.output': expected a name in quotes (FILE.h5), got an array" \
  run --config names.toml "${small[@]}"
expect_error "key 'render.out': expected a name in quotes (DIR), got an array" \
  render run.h5 --config names.toml
[[ ! -e a.h5,b.h5 && ! -e x,y ]] && pass || fail "an array of names made a file or a folder"
# info of a sweep says what it measured, how many members settled and which patterns formed.
"$gs" sweep --feed 0.01:0.06:4 --kill 0.04:0.07:4 --rows 32 --cols 32 --images 20 --steps-per-image 50 \
  --until-steady 1e-6 --classify --quiet -o map.h5 && "$gs" info map.h5 >info.txt &&
  grep -qE "^until steady: change of v per step below 1e-06 for 5 images; [0-9]+ of 16 members settled" info.txt &&
  grep -q "^statistics: every image of every member (/stats), histogram of v in 50 bins" info.txt &&
  grep -qE "^patterns of the members' last images: .* \(/stats/class\)$" info.txt &&
  pass || fail "info of a sweep's statistics: $(cat info.txt)"
# A volume's file records its stencil's 27 weights (it held nine zeros).
"$gs" run --depth 3 --rows 4 --cols 4 --images 1 --steps-per-image 1 --quiet -o weights.h5 &&
  /usr/bin/python3 -c '
import h5py, numpy as np
w = h5py.File("weights.h5", "r").attrs["stencil"].reshape(3, 3, 3)
assert w[0, 1, 1] == w[1, 0, 1] == w[1, 1, 2] == 1 / 6 and w.sum() == 1 and w[1, 1, 1] == 0, w' &&
  pass || fail "a volume's stencil weights"
# Whole numbers are decimal: CLI11 alone reads 0x40 as 64 and 010 as eight.
expect_error "--rows: expected a whole number, got '0x40'" run --rows 0x40
expect_error "--image: expected a whole number, got '0x1'" render run.h5 --image 0x1
"$gs" run --rows 010 --cols 8 --images 1 --steps-per-image 1 --quiet -o leading-zero.h5 &&
  /usr/bin/python3 -c 'import h5py; assert h5py.File("leading-zero.h5", "r")["v"].shape == (1, 10, 8)' &&
  pass || fail "--rows 010 is not ten rows"
expect_error "--feed: expected a number, got 'lots'" run --feed lots
# An empty text is no number (CLI11 reads it as 0: a script's empty variable ran with F = 0).
expect_error "--feed: expected a number, got ''" run --feed ''
expect_error "--until-steady: expected a number, got ' '" run --until-steady ' '
expect_error "--du: expected a number, got ''" sweep --du ''
expect_error "--seed: expected a whole number, got ''" run --init noise --seed ''
expect_error "info: the file name is empty" info ''
# An empty text would silently mean the default (a script's unset variable).
expect_error "--pattern: an empty value: give one, or leave --pattern out for its default" run --pattern ''
expect_error "--render: an empty value" run "${small[@]}" --render '' -o empty-render.h5
expect_error "--slice: an empty value" render run.h5 --slice ''
expect_error "--max-batch-memory: an empty value" sweep --max-batch-memory ' '
expect_error "--fps: expected a number, got ''" render run.h5 --video x.mp4 --fps ''
expect_error "images must be a positive integer" run --images 0
expect_error "steps-per-image must be a positive integer" run --steps-per-image -1
expect_error "feed must be a finite non-negative number" run --feed -0.1
expect_error "kill must be a finite non-negative number" run --kill nan
expect_error "du must be a finite non-negative number" run --du inf
expect_error "stability limit 4.83" run --dt 5.5
expect_error "stability limit 4.83" run --dt 4.9
expect_error "stability limit 2.45" run --stencil five-point --dt 3
# One rule for a time step, whatever its sign: above 0.
expect_error "dt must be a finite positive number, got 0" run --dt 0
expect_error "dt must be a finite positive number, got -1" run --dt -1
expect_error "du must be a finite non-negative number, got -1" run --du -1
expect_error "fuse must be 0 (the backend's best) or a positive whole number, got -1" run --fuse -1
expect_error "got 8 values" run --stencil 1,1,1,1,0,1,1,1
expect_error "not a number" run --stencil 1,1,1,1,0,1,1,1,x
expect_error "finite" run --stencil 1,1,1,1,0,1,1,1,inf
expect_error "stencil custom is anti-diffusive" run --stencil -1,1,-1,1,0,1,-1,1,-1
expect_error "boundary: expected" run --boundary open
expect_error "precision: expected" run --precision half
expect_error "fields: expected" run --fields w
expect_error "does not exist" run "${small[@]}" -o no/such/folder/x.h5
expect_error "output . is a directory, not a file" run "${small[@]}" -o . --force
mkdir -p adir
expect_error "output adir is a directory, not a file" run "${small[@]}" -o adir
expect_error "output: the file name is empty" run "${small[@]}" -o ""
expect_error "output adir is a directory, not a file" sweep --rows 8 --cols 8 --images 1 -o adir
expect_error "output: the file name is empty" sweep --rows 8 --cols 8 --images 1 -o ""
[[ -z $(ls -A adir) ]] && pass || fail "a refused output wrote into adir"
expect_error "output needs" run --rows 10000 --cols 10000 --images 100000 -o big.h5
[[ ! -e big.h5 ]] && pass || fail "a refused run left a file"
# A state larger than the memory: refused with what it needs and what there is, before anything.
expect_error "the state of 100000x100000 cells (single precision) needs 149.0 GiB of host memory, and" \
  run --rows 100000 --cols 100000 --images 1 -o big.h5
[[ ! -e big.h5 ]] && pass || fail "a run refused for its memory left a file"
expect_error "backend: expected" run --backend gpu
# A count of images in digits, as every whole number (1e3 is refused as --images 1e3 is).
expect_error "checkpoint-every: expected a whole number of images from 1 (e.g. 50) or a time (90s, 10m, 1h), got '1e3'" \
  run "${small[@]}" --checkpoint-every 1e3 -o ck.h5
expect_error "got '0'" run "${small[@]}" --checkpoint-every 0 -o ck.h5
# A device asked for by number is not dropped in silence: refused with the cpu backend, and where
# auto finds no device, said before the run goes on on the cpu backend.
expect_error "device 1: the cpu backend runs on this machine's cores" run "${small[@]}" --device 1 -o dev.h5
if ! "$gs" info 2>/dev/null | grep -q "device 0:"; then
  "$gs" run --rows 24 --cols 40 --images 3 --steps-per-image 5 --device 1 -o dev.h5 2>err.txt &&
    grep -q "^grayscott: --device 1: .*; running on the cpu backend$" err.txt && pass ||
    fail "--device with auto on a machine without a device: $(cat err.txt)"
fi
expect_error "threads must be 0 (all cores) or a whole number from 1 to 4096, got 100000" \
  run "${small[@]}" --threads 100000 -o threads.h5
expect_error "threads must be 0 (all cores) or a whole number from 1 to 4096, got -1" \
  run "${small[@]}" --threads -1 -o threads.h5
[[ ! -e threads.h5 ]] && pass || fail "a refused --threads left a file"
expect_error "no such file" render nothing.h5
expect_error "range: expected" render run.h5 --range 1
# A range is written either way in both places: render's LO:HI also as LO,HI, a histogram's
# LOW,HIGH also as LOW:HIGH, each the same as the other form.
"$gs" render run.h5 --out colon --range 0:0.4 --image 0 2>/dev/null &&
  "$gs" render run.h5 --out comma --range 0,0.4 --image 0 2>/dev/null &&
  cmp -s colon/v_0000.png comma/v_0000.png && pass || fail "render --range 0,0.4 is not 0:0.4"
"$gs" run "${small[@]}" --stats --histogram-range 0,0.5 -o hcomma.h5 --quiet &&
  "$gs" run "${small[@]}" --stats --histogram-range 0:0.5 -o hcolon.h5 --quiet &&
  /usr/bin/python3 -c '
import h5py, numpy as np
a, b = h5py.File("hcomma.h5", "r"), h5py.File("hcolon.h5", "r")
assert np.array_equal(a["stats/v_histogram"][...], b["stats/v_histogram"][...])
assert list(a["stats/v_histogram"].attrs["range"]) == [0, 0.5], a["stats/v_histogram"].attrs["range"]' &&
  pass || fail "--histogram-range 0:0.5 is not 0,0.5"

# A FIFO (or a device) given as the file to read is refused before it is opened: opening a FIFO
# waits for a writer for ever (and a render, blocked there, heard no signal).
mkfifo fifo.h5
for command in "render fifo.h5 --out fifo" "render fifo.h5 --video fifo.gif" "info fifo.h5" \
    "repair fifo.h5" "run --resume fifo.h5" "sweep --resume fifo.h5"; do
  # shellcheck disable=SC2086
  expect_error "fifo.h5 is a FIFO, not a regular file" $command
done
expect_error "/dev/null is a character device, not a regular file" render /dev/null
# --until-steady is checked against the preset's own steps per image (course-numpy: 34, whose
# resolution is 3.5e-9), not the default 32's.
"$gs" run --rows 16 --cols 16 --images 2 --preset course-numpy --until-steady 3.6e-9 --quiet \
  -o preset-steady.h5 && pass || fail "--until-steady checked against 32 steps, not the preset's 34"
expect_error "over 34 steps per image" run --rows 16 --cols 16 --images 2 --preset course-numpy \
  --until-steady 3.4e-9 -o preset-steady-too-fine.h5
# Asked to stop once settled, a run that went to its end says it did not settle.
"$gs" run --rows 32 --cols 32 --init noise --feed 0.04 --kill 0.065 --images 4 --until-steady 1e-8 \
  -o unsettled.h5 2>unsettled.txt && grep -q "note: it did not settle: the change of v per step did not stay below 1e-08 for 5 images" unsettled.txt &&
  pass || fail "an unsettled --until-steady run: $(cat unsettled.txt)"
# --cuda-aware-mpi, --gpu-aware-mpi's earlier name, is still read (here: refused as an option of
# runs over ranks, as the new name is, not as an unknown option).
if "$gs" run --help | grep -q -- --halo-depth; then  # a build with MPI
  expect_error "gpu-aware-mpi: an option of a run over MPI ranks" run "${small[@]}" \
    --cuda-aware-mpi on -o cuda-aware.h5
fi
# A run that writes u alone draws u (v is not in its file).
"$gs" run --rows 16 --cols 16 --images 2 --steps-per-image 5 --fields u -o drawn-u.h5 --render drawn-u --quiet &&
  [[ -f drawn-u/u_0000.png && -f drawn-u/u_0001.png && ! -e drawn-u/v_0000.png ]] && pass ||
  fail "run --fields u --render did not draw u: $(ls drawn-u 2>&1)"
# A --render folder the pictures cannot go into is refused before the run.
touch notafolder
expect_error "render notafolder is a file, not a folder" run "${small[@]}" -o pics.h5 --render notafolder
expect_error "cannot be created: notafolder is a file" run "${small[@]}" -o pics.h5 --render notafolder/pics
# A folder on a file system of no size (/proc: root may write there, yet no file can be made).
if [[ $EUID -eq 0 ]]; then
  expect_error "output folder /proc is on a file system that holds no files" run "${small[@]}" -o /proc/x.h5
fi
expect_error "render folder pics.h5 is the name of the run's file pics.h5" run "${small[@]}" -o pics.h5 --render pics.h5
expect_error "render folder ./pics.xmf is the name of the run's file pics.xmf" run "${small[@]}" -o pics.h5 --render ./pics.xmf
expect_error "render folder pics.h5/ is the name of the run's file pics.h5" run "${small[@]}" -o pics.h5 --render pics.h5/
[[ ! -e pics.h5 ]] && pass || fail "a refused --render left an output file"
expect_error "render notafolder is a file, not a folder" render run.h5 --out notafolder

# A field the file does not hold: the one it does is named.
"$gs" run "${small[@]}" --fields u --quiet -o only-u.h5
expect_error "only-u.h5 has no field v (it holds u: --field u; run with --fields u,v writes both)" \
  render only-u.h5 --out only-u --field v
# Without --field, a file that holds u alone is drawn by its u, as run --render draws it.
"$gs" render only-u.h5 --out only-u 2>/dev/null && [[ $(ls only-u) == $'u_0000.png\nu_0001.png\nu_0002.png' ]] &&
  pass || fail "render of a u-only file without --field: $(ls only-u)"
expect_error "run.h5 has no field u (it holds v: --field v; run with --fields u,v writes both)" \
  render run.h5 --field u --out only-v

# Ctrl-C stops render between two pictures or frames: no partial file is left behind.
"$gs" run --rows 512 --cols 512 --images 300 --steps-per-image 1 --backend cpu --quiet -o many.h5
timeout --preserve-status -s INT 1.5 "$gs" render many.h5 --out many-pics --scale 4 2>err.txt
rc=$?
[[ $rc -eq 130 ]] && grep -q "^grayscott: render: interrupted by SIGINT: stopped after [0-9]* pictures into many-pics$" err.txt &&
  [[ $(ls many-pics | grep -c 'v_.*png$') -lt 300 && -z $(ls many-pics | grep partial) ]] && pass ||
  fail "Ctrl-C of render: rc=$rc $(cat err.txt) $(ls many-pics | tail -2)"
timeout --preserve-status -s INT 1.5 "$gs" render many.h5 --video many.mp4 --scale 2 2>err.txt
rc=$?
[[ $rc -eq 130 && ! -e many.mp4 && -z $(ls | grep 'many.mp4.partial') ]] &&
  grep -q "many.mp4 was not written" err.txt && pass ||
  fail "Ctrl-C of render --video: rc=$rc $(cat err.txt) $(ls | grep many)"
# A second Ctrl-C ends render at once, and leaves neither the picture or video it was writing
# (NAME.partial-PID) nor the ffmpeg encoding one. Each is sent once that file exists.
second_interrupt_while_writing() {  # PATTERN COMMAND...: the two SIGINTs once PATTERN exists
  local pattern="$1"; shift
  "$gs" "$@" 2>err.txt &
  local pid=$! waited=0
  until compgen -G "$pattern" >/dev/null || (( waited++ > 600 )); do sleep 0.05; done
  kill -INT $pid; sleep 0.2; kill -INT $pid
  wait $pid
}
second_interrupt_while_writing 'huge/v_0000.png.partial-*' render many.h5 --out huge --image 0 --scale 24
rc=$?
[[ $rc -eq 130 && -z $(ls huge) ]] && grep -q "second SIGINT: exiting now" err.txt && pass ||
  fail "a second Ctrl-C of render: rc=$rc $(cat err.txt) $(ls huge)"
# An encoder that stalls (reads no frame, ignores SIGINT and SIGTERM): the frame's write blocks,
# so the first Ctrl-C cannot stop the rendering between frames; the second ends it and the encoder.
cat > stalled-ffmpeg <<'EOF'
#!/bin/bash
trap '' INT TERM
for last; do :; done
: > "${last#file:}"
exec -a "stalled-encoder ${last#file:}" sleep 60
EOF
chmod +x stalled-ffmpeg
(export GRAYSCOTT_FFMPEG=$PWD/stalled-ffmpeg
 second_interrupt_while_writing 'ctrl-c-twice.mp4.partial-*' render many.h5 --video ctrl-c-twice.mp4)
rc=$?
[[ $rc -eq 130 && -z $(ls | grep 'ctrl-c-twice') ]] && ! pgrep -f "stalled-encoder" >/dev/null &&
  grep -q "second SIGINT: exiting now" err.txt && pass ||
  fail "a second Ctrl-C of render --video: rc=$rc $(cat err.txt) $(ls | grep 'ctrl-c-twice') $(pgrep -af stalled-encoder)"
pkill -f stalled-encoder

# A run that blows up stops at the first non-finite image and keeps the ones before.
"$gs" run --rows 16 --cols 16 --images 5 --steps-per-image 1 --init-values 1e12,1e12 -o blow.h5 --backend cpu 2>err.txt
rc=$?
[[ $rc -ne 0 ]] && grep -q "non-finite at image 1" err.txt && pass || fail "blow-up: rc=$rc $(cat err.txt)"
/usr/bin/python3 -c '
import h5py, numpy as np; f = h5py.File("blow.h5", "r")
assert f["v"].shape == (1, 16, 16) and np.isfinite(f["v"][...]).all()' && pass || fail "blow-up file"
# Within the stability limit (4.83) but above the dt stable at every state (1.41): from noise it
# diverges in its first image; the error and the file's status advise the dt.
"$gs" run --rows 128 --cols 128 --images 3 --steps-per-image 100 --init noise --dt 4 -o dt4.h5 2>err.txt
rc=$?
[[ $rc -ne 0 ]] && grep -q "non-finite at image 0 (step 100); dt 4 is above 1.41, the largest dt stable at every state" err.txt &&
  pass || fail "dt advice: rc=$rc $(cat err.txt)"
/usr/bin/python3 -c '
import h5py; f = h5py.File("dt4.h5", "r")
assert "dt 4 is above 1.41" in f.attrs["status"], f.attrs["status"]' && pass || fail "dt advice in the status"
# Continuing it would diverge again: nothing to resume, and info does not offer it.
expect_error "nothing to resume: blow.h5 holds a run that stopped: values became non-finite at image 1" \
  run --resume blow.h5
"$gs" info blow.h5 >info.txt 2>&1
grep -q "^state: diverged" info.txt && ! grep -q "resume" info.txt && pass ||
  fail "info of a diverged run: $(cat info.txt)"

# A run that settles ends there, as asked (exit 0), says so, and is not resumed.
"$gs" run --rows 64 --cols 64 --images 30 --steps-per-image 50 --feed 0.01 --kill 0.09 \
  --until-steady 1e-6 --steady-images 3 -o settled.h5 2>err.txt
rc=$?
[[ $rc -eq 0 ]] && grep -q "^settled after image 5 (step 250): the change of v per step stayed below 1e-06 for 3 images" err.txt &&
  pass || fail "until-steady: rc=$rc $(cat err.txt)"
"$gs" info settled.h5 >info.txt 2>&1 && grep -q "^until steady: change of v per step below 1e-06 for 3 images" info.txt &&
  grep -q "^statistics: every image (/stats), histogram of v in 50 bins" info.txt && pass || fail "info of a settled run: $(cat info.txt)"
# info names the pattern of a classified run's last image, as /stats/class holds it.
"$gs" run --rows 64 --cols 64 --images 2 --steps-per-image 50 --feed 0.01 --kill 0.09 --classify \
  --backend cpu --quiet -o classified.h5 && "$gs" info classified.h5 >info.txt 2>&1
want=$(/usr/bin/python3 -c '
import h5py; f = h5py.File("classified.h5", "r"); c = f["stats/class"]
print(c.attrs["flag_meanings"].split()[c[-1]])')
[[ -n $want ]] && grep -qx "pattern of the last image: $want (/stats/class)" info.txt && pass ||
  fail "info of a classified run: $(cat info.txt)"
expect_error "nothing to resume: settled.h5 holds a run that settled after image 5" run --resume settled.h5
expect_error "until-steady: the tolerance must be a finite positive number (0: never), got -1" run --until-steady -1
expect_error "histogram-bins must be a whole number from 1 to 1000000, got 0" run --stats --histogram-bins 0
# Refused even where nothing would use them, not ignored.
expect_error "histogram-bins must be a whole number from 1 to 1000000, got 0" run --histogram-bins 0
expect_error "histogram-range must be two finite numbers LOW,HIGH with LOW < HIGH, got 1,0" run --histogram-range 1,0
expect_error "steady-images must be a whole number from 1 to 1000000, got 0" run --steady-images 0
# Good values that nothing would use are refused too, not ignored.
expect_error "histogram-bins: a setting of the statistics, which this run does not measure: give --stats" \
  run --histogram-bins 7 --rows 8 --cols 8 -o unmeasured.h5
expect_error "steady-images: the images in a row that --until-steady waits for; without it, this run does not settle" \
  sweep --steady-images 3 --rows 8 --cols 8 -o unmeasured.h5
# Their defaults given as such ask for nothing (a configuration file listing every key): accepted.
"$gs" run --histogram-bins 50 --histogram-range 0:1 --steady-images 5 --rows 8 --cols 8 --images 1 \
  -o unmeasured_defaults.h5 --quiet >/dev/null 2>&1 && pass || fail "statistics' defaults given without --stats"
# Measured, the run still does not settle without a tolerance: --steady-images alone does nothing.
expect_error "steady-images: the images in a row that --until-steady waits for" \
  run --steady-images 3 --stats --rows 8 --cols 8 -o unmeasured.h5
expect_error "steady-images: the images in a row that --until-steady waits for" \
  run --steady-images 3 --classify --rows 16 --cols 16 -o unmeasured.h5

# Pictures.
"$gs" render run.h5 --out pics 2>/dev/null && [[ $(ls pics/*.png | wc -l) -eq 3 ]] && pass || fail "render"
# --image counts from the end when negative (-1: the last), and never means "every image".
"$gs" render run.h5 --out last --image -1 2>/dev/null && [[ $(ls last) == v_0002.png ]] && pass ||
  fail "render --image -1: $(ls last)"
"$gs" render run.h5 --out first --image -3 2>/dev/null && [[ $(ls first) == v_0000.png ]] && pass ||
  fail "render --image -3: $(ls first)"
expect_error "image -4 is out of range: the file holds 3 images (0 to 2, or -3 to -1 from the end)" \
  render run.h5 --out none --image -4
expect_error "image 3 is out of range" render run.h5 --out none --image 3
[[ ! -e none ]] && pass || fail "a refused render made its folder"
# Images with no cell are refused as such (an automatic scale was computed from them first).
/usr/bin/python3 -c '
import h5py, numpy as np
with h5py.File("no-cells.h5", "w") as f:
    f["v"] = np.zeros((2, 0, 5), np.float32)'
expect_error "no-cells.h5: the images of /v are empty (0x5): nothing to draw" render no-cells.h5 --out none
# Another program's file whose /v has a sweep's axes is named as such (not "cannot open /feed").
/usr/bin/python3 -c '
import h5py, numpy as np
with h5py.File("foreign.h5", "w") as f:
    f["v"] = np.zeros((2, 3, 4, 5), np.float32)'
expect_error "foreign.h5 is not a grayscott sweep file (no attribute kind = \"sweep\")" render foreign.h5 --out none
# An image larger than the memory is refused before it is read: 2^40 cells, never written (an HDF5
# dataset's unwritten chunks take no space).
/usr/bin/python3 -c '
import h5py
with h5py.File("huge.h5", "w") as f:
    f.create_dataset("v", shape=(1, 1 << 20, 1 << 20), dtype="f4", chunks=(1, 1, 1 << 20))'
expect_error "an image of 1048576x1048576 needs 19.0 TiB of memory to render" render huge.h5 --out none
[[ ! -e none ]] && pass || fail "a refused render made its folder"
"$gs" run "${small[@]}" -o withpics.h5 --render pics2 --quiet && [[ -f pics2/v_0002.png ]] && pass ||
  fail "run --render"

# Pictures that exist are replaced only with --force, by render and by run --render (refused
# before the run), and the count reads as English.
cp pics/v_0001.png precious.png
expect_error "pics/v_0000.png and 2 more pictures exist (--force replaces them)" render run.h5 --out pics
cmp -s pics/v_0001.png precious.png && pass || fail "a refused render changed a picture"
ln -s elsewhere.png last/v_0001.png
expect_error "last/v_0001.png exists" render run.h5 --out last --image 1
expect_error "pics2/v_0000.png and 2 more pictures exist" run "${small[@]}" -o again.h5 --render pics2
[[ ! -e again.h5 ]] && pass || fail "a run refused for its pictures left an output file"
"$gs" render run.h5 --out last --image 1 --force 2>err.txt && [[ -f last/v_0001.png && ! -L last/v_0001.png ]] &&
  grep -qx "rendered 1 picture into last" err.txt && pass || fail "render --force: $(cat err.txt)"
"$gs" render run.h5 --out pics --force 2>err.txt && grep -qx "rendered 3 pictures into pics" err.txt &&
  pass || fail "render --force of every image: $(cat err.txt)"
# Pictures of a longer run rendered there before stay as they were, and are said to be there (a
# video of v_*.png would take them for this run's); one picture asked (--image) says nothing.
"$gs" run --rows 16 --cols 16 --images 5 --steps-per-image 2 -o longer.h5 --render stale --quiet
"$gs" render run.h5 --out stale --force 2>err.txt &&
  grep -qx "note: stale also holds 2 pictures of v that this rendering did not write (v_0003.png to v_0004.png), left as they were" err.txt &&
  [[ $(ls stale | wc -l) -eq 5 ]] && pass || fail "render --force over a longer run's pictures: $(cat err.txt)"
"$gs" render run.h5 --out stale --force --image 0 2>err.txt && ! grep -q "also holds" err.txt &&
  pass || fail "render --image over other pictures: $(cat err.txt)"
"$gs" run "${small[@]}" -o stale.h5 --render stale --force 2>err.txt &&
  grep -q "note: stale also holds 2 pictures of v" err.txt && pass || fail "run --render over a longer run's pictures: $(cat err.txt)"
"$gs" run "${small[@]}" -o withpics.h5 --render pics2 --force --quiet && pass || fail "run --render --force"
# A file holding no image says what it holds and its status.
/usr/bin/python3 -c '
import h5py
with h5py.File("empty.h5", "w") as f:
    f.create_dataset("v", shape=(0, 4, 4), maxshape=(None, 4, 4), dtype="f4", chunks=(1, 4, 4))
    f.attrs["status"] = "interrupted by SIGTERM after image 0"'
expect_error "empty.h5 holds no image (status: interrupted by SIGTERM after image 0)" render empty.h5 --out none
[[ ! -e none ]] && pass || fail "a refused render made its folder"

# What the build can use: one line per engine and one for MPI, whatever this machine has.
"$gs" info >info.txt 2>&1 && grep -q '^cpu: [0-9]* OpenMP threads$' info.txt &&
  grep -q '^mpi: ' info.txt && grep -q '^cuda: ' info.txt && pass || fail "info: $(cat info.txt)"

grep -q '^hdf5: 1\.[0-9]*\.[0-9]*, \(serial\|parallel\)' info.txt && grep -q '^png: libpng ' info.txt &&
  grep -q '^ffmpeg: ' info.txt && pass || fail "info names HDF5, libpng and ffmpeg: $(cat info.txt)"

# A friendlier command line: the command that is wrong is named, errors point to the command's
# help, every help ends with examples and the documentation, metavars say what options take.
expect_error "unknown command 'foo'; the commands are run, render, info, repair, sweep, bench" foo
expect_error "a command is needed: run, render, info, repair, sweep, bench"
expect_error "(see grayscott run --help)" run --bogus
expect_error "(see grayscott sweep --help)" sweep --rows
for command in "" run sweep render bench; do
  "$gs" $command --help >help.txt 2>&1
  if grep -q '^Examples:' help.txt && grep -q '^Documentation: README.md and docs/' help.txt; then
    pass
  else
    fail "grayscott $command --help has no examples or no pointer to the docs"
  fi
done
"$gs" run --help >help.txt
if grep -q -- '--seed UINT' help.txt && grep -q -- '-o,--output FILE.h5' help.txt &&
   grep -q -- '--boundary zero-flux|periodic|fixed' help.txt &&
   ! grep -E -- '--[a-z-]+ TEXT( |=|$)' help.txt; then
  pass
else
  fail "run --help: metavars that say what the options take: $(grep -E 'TEXT|seed' help.txt)"
fi

echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]

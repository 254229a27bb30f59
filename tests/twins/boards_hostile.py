# SPDX-License-Identifier: MIT
"""Hostile i.MX95 boards: a healthy twin whose board side misbehaves the way a broken, slow or
malicious board does (tests/test_hostile.py).

The suite always runs its own npu-info/npu-run, so a board can only lie through what it owns: its
files (sysfs strings), its programs — here a `python3` and a `tar` first in the board's PATH, as a
compromised or half-flashed image would have — and its sshd. Each wrapper runs the real program
and then does the one hostile thing its mode names; everything else stays the healthy board.

| mode | what the board does |
| --- | --- |
| flood-info | npu-info prints without end |
| flood-line | npu-run prints one 70 MB line on stderr, then runs |
| flood-random | npu-run prints random bytes (escape sequences included) on stderr without end |
| invalid-json | npu-info prints a cut JSON document |
| deep-json | npu-info prints JSON nested 100 000 deep |
| mistyped-json | npu-info's driver is a string and its soc a list |
| absurd-json | npu-info claims a 10^30-byte Neutron pool and driver version "1e30" |
| pickle-npy | npu-run's first output is a pickled object array |
| lying-npy | npu-run's first output declares 10^9 float32 values and holds 16 bytes |
| name-clash | npu-run names its first output `npu-run.json` (the suite's own artifact) |
| escapes | every board string carries escape sequences and HTML; the NPU run prints them and fails |
| dropped-link | the output stream stops half-way: the board kills its sshd |
| reboot | the board goes away in the middle of the NPU run and comes back |
| silent-sftp | the board's SFTP server never answers (the suite needs no SFTP) |
"""

from __future__ import annotations

import shutil
import sys
from dataclasses import replace

from npu_accept.sim.harness import TwinSpec
from npu_accept.sim.imx95 import HEALTHY, TwinAssets, imx95_spec

ESCAPES = "<script>alert(1)</script>\x1b]0;pwned\x07\x1b[2J\u202eevil"
MODES = (
    "flood-info",
    "flood-line",
    "flood-random",
    "invalid-json",
    "deep-json",
    "mistyped-json",
    "absurd-json",
    "pickle-npy",
    "lying-npy",
    "name-clash",
    "escapes",
    "dropped-link",
    "reboot",
    "silent-sftp",
)
_BIN = "/opt/hostile/bin"

# Each mode: (when the tool is npu-info, when it is npu-run); "" runs the real tool untouched.
# $REAL is the board's real python3, $out the npu-run --output-dir, $backend its --backend.
_EDIT_INFO = (
    '"$REAL" "$@" | "$REAL" -c "import json, sys; d = json.load(sys.stdin); {}; print(json.dumps(d))"'
)
_AFTER_RUN = '"$REAL" "$@"; status=$?; "$REAL" -c "{}" "$out"; exit $status'
_BEHAVIOUR: dict[str, tuple[str, str]] = {
    "flood-info": ('exec yes \'{"schema": "npu-info/1", "flood": true}\'', ""),
    "flood-line": ("", 'head -c 70000000 /dev/zero | tr \'\\0\' x >&2; echo >&2; exec "$REAL" "$@"'),
    "flood-random": ("", "exec cat /dev/urandom >&2"),
    "invalid-json": ('echo \'{"schema": "npu-info/1", "family": \'; exit 0', ""),
    "deep-json": ('exec "$REAL" -c \'import sys; sys.stdout.write("[" * 100000 + "]" * 100000)\'', ""),
    "mistyped-json": (_EDIT_INFO.format("d['driver'] = 'loaded'; d['soc'] = ['i.MX95']"), ""),
    "absurd-json": (
        _EDIT_INFO.format("d['memory']['pools'][0]['size'] = 10**30; d['driver']['version'] = '1e30'"),
        "",
    ),
    "pickle-npy": (
        "",
        _AFTER_RUN.format(
            "import sys, numpy as np; np.save(sys.argv[1] + '/out0.npy', np.array([{'a': 1}], dtype=object), "
            "allow_pickle=True)"
        ),
    ),
    "lying-npy": (
        "",
        _AFTER_RUN.format(
            "import sys; from numpy.lib import format as f; h = open(sys.argv[1] + '/out0.npy', 'wb'); "
            "f.write_array_header_1_0(h, {'descr': '<f4', 'fortran_order': False, 'shape': (10**9,)}); "
            "h.write(bytes(16)); h.close()"
        ),
    ),
    "escapes": (
        "",
        'if [ "$backend" = tflite-delegate ]; then printf \'%s\\n\' "NPU fault: $ESC" >&2; exit 1; fi; '
        'exec "$REAL" "$@"',
    ),
    "reboot": (
        "",
        'if [ "$backend" = tflite-delegate ]; then (sleep 1; touch /run/twin/restart) >/dev/null 2>&1 '
        '</dev/null & pkill -KILL -x sshd; sleep 30; exit 1; fi; exec "$REAL" "$@"',
    ),
}


def _name_clash() -> str:
    # The report names the first output "npu-run.json", and the board writes a file by that name.
    code = (
        "import json, sys; d = json.load(sys.stdin); o = d['outputs'][0]; "
        "o['file'] = 'npu-run.json'; print(json.dumps(d))"
    )
    return f'"$REAL" "$@" | "$REAL" -c "{code}"; echo "board data" > "$out/npu-run.json"'


def _python3(mode: str) -> str:
    info, run = _BEHAVIOUR.get(mode, ("", ""))
    if mode == "name-clash":
        run = _name_clash()
    return f"""#!/bin/sh
# a hostile board's python3 ({mode}): the real one, then the hostile part
REAL={sys.executable}
ESC='{ESCAPES}'
out=; backend=; prev=
for a in "$@"; do
    [ "$prev" = --output-dir ] && out=$a
    [ "$prev" = --backend ] && backend=$a
    prev=$a
done
case "$1" in
    */npu-info) {info or 'exec "$REAL" "$@"'} ;;
    */npu-run) {run or 'exec "$REAL" "$@"'} ;;
    *) exec "$REAL" "$@" ;;
esac
"""


def _tar(real: str) -> str:
    # The output stream (tar -cf -) stops after 20 kB, and the board's sshd is killed.
    return f"""#!/bin/sh
case " $* " in
    *" -cf "*) {real} "$@" | head -c 20000; pkill -KILL -x sshd; sleep 30; exit 1 ;;
    *) exec {real} "$@" ;;
esac
"""


def hostile_spec(mode: str, assets: TwinAssets) -> TwinSpec:
    """The healthy i.MX95 twin with one hostile behaviour."""
    if mode not in MODES:
        raise ValueError(f"unknown hostile mode {mode!r}; use one of {', '.join(MODES)}")
    spec = imx95_spec(replace(HEALTHY, name=f"hostile-{mode}"), assets)
    files = dict(spec.files)
    if mode == "escapes":
        for key in ("soc_id", "machine", "family"):
            files[f"/sys/devices/soc0/{key}"] = f"{ESCAPES}\n"
    executables = {**spec.executables, f"{_BIN}/python3": _python3(mode)}
    if mode == "dropped-link":
        executables[f"{_BIN}/tar"] = _tar(shutil.which("tar") or "/bin/tar")
    system = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    path = f"{_BIN}:{sys.executable.rsplit('/', 1)[0]}:{system}"
    return replace(
        spec,
        files=files,
        executables=executables,
        env={**spec.env, "PATH": path},
        sftp_subsystem="/bin/sleep 3600" if mode == "silent-sftp" else spec.sftp_subsystem,
    )


# A chatty board stays within what docs/limits.md allows: its tools log just under the 1 MiB the
# suite keeps of a stream, at every run, and its kernel log holds just under 1 MiB too.
CHATTY_BYTES = 1_000_000
_CHATTY_LINE = "neutron 4ab00004.imx95-neutron: debug: job queued, ring 0, fence 4711, all is well"


def chatty_spec(assets: TwinAssets) -> TwinSpec:
    """The healthy i.MX95 twin, chatty within the documented bounds: npu-info and npu-run print
    CHATTY_BYTES of debug lines on stderr before they run, and dmesg prints as much."""
    lines = CHATTY_BYTES // (len(_CHATTY_LINE) + 16)
    boot_log = tuple(f"[{3 + n / 1000:12.6f}] {_CHATTY_LINE}" for n in range(lines))
    spec = imx95_spec(replace(HEALTHY, name="imx95-chatty", boot_log=boot_log), assets)
    chatter = f'yes \'{_CHATTY_LINE}\' | head -c {CHATTY_BYTES} >&2; exec "$REAL" "$@"'
    python3 = f"""#!/bin/sh
# a chatty board's python3: the on-target tools log a lot on stderr, then run
REAL={sys.executable}
case "$1" in
    */npu-info|*/npu-run) {chatter} ;;
    *) exec "$REAL" "$@" ;;
esac
"""
    system = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    return replace(
        spec,
        executables={**spec.executables, f"{_BIN}/python3": python3},
        env={**spec.env, "PATH": f"{_BIN}:{sys.executable.rsplit('/', 1)[0]}:{system}"},
    )


# A test hook on a healthy board: the board's tar holds the first --keep-tools install it sees (an
# extraction into a `*.part.*` directory, collect._collect_info) before it reads the upload, so a
# test knows the suite is in the middle of that upload and can act there, then let it go on.
# In HOOK_DIR: armed (hold the next install), uploading (one is held), go (let it go on), cut (pass
# only that many bytes of the upload on to tar, as a link that ends between two members would).
HOOK_DIR = "/run/upload-hook"


def upload_hook_spec(assets: TwinAssets) -> TwinSpec:
    """The healthy i.MX95 twin whose tar holds an armed --keep-tools install (HOOK_DIR) until
    told to go on (at most 60 s); `HOOK_DIR/extracted` says that tar has ended."""
    spec = imx95_spec(replace(HEALTHY, name="imx95-upload-hook"), assets)
    real = shutil.which("tar") or "/bin/tar"
    tar = f"""#!/bin/sh
# tar with a test hook: an armed --keep-tools install waits before it reads its stdin
H={HOOK_DIR}
case " $* " in
    *" -C "*.part.*)
        if rm "$H/armed" 2>/dev/null; then
            echo $$ > "$H/uploading"; n=0
            while [ ! -e "$H/go" ] && [ $n -lt 600 ]; do sleep 0.1; n=$((n + 1)); done
            if [ -f "$H/cut" ]; then head -c "$(cat "$H/cut")" | {real} "$@"; else {real} "$@"; fi
            status=$?; touch "$H/extracted"; exit $status
        fi ;;
esac
exec {real} "$@"
"""
    system = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    return replace(
        spec,
        executables={**spec.executables, f"{_BIN}/tar": tar},
        env={**spec.env, "PATH": f"{_BIN}:{sys.executable.rsplit('/', 1)[0]}:{system}"},
    )

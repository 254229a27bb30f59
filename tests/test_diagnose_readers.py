# SPDX-License-Identifier: MIT
"""npu-diagnose reads a line however it was pasted. Two real lines — the runtime's refusal of a
format-6 model (rockchip-linux/rknn-toolkit2 issue #19, tests/fixtures/field) and the vendor
driver's job timeout (tests/fixtures/diagnose/rknpu-job-timeout.fires.dmesg) — are wrapped the
ways the tools users paste from print them (logcat's brief, tag and threadtime formats, journald's
short, short-iso and json outputs, dmesg with and without its stamp, -T, -x, syslog priorities,
forum quoting, shell prompts, ANSI colour, CRLF, other encodings): the same signature fires in
every wrapping, and a healthy line stays clean in every wrapping."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from npu_accept.diagnose.findings import Context, diagnose, unexplained
from npu_accept.diagnose.lines import unwrap
from npu_accept.diagnose.sources import recognise

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "npu-diagnose"
RUNTIME = "Invalid RKNN model version 6"
KERNEL = "RKNPU fdab0000.npu: RKNPU: job timeout, flags: 0x0:"
HEALTHY = "RKNN Runtime Information, librknnrt version: 2.3.2 (429f97ae6b@2025-04-09T09:09:27)"

WRAPPINGS = {
    "runtime": lambda m, lv: f"{lv} RKNN: [08:56:48.563] {m}",
    "runtime without stamp": lambda m, lv: f"{lv} RKNN: {m}",
    "logcat threadtime": lambda m, lv: f"06-28 09:30:04.462 26854 26854 {lv} RKNN    : {m}",
    "logcat threadtime with year": lambda m, lv: f"2024-06-28 09:30:04.462 26854 26854 {lv} RKNN    : {m}",
    "logcat brief": lambda m, lv: f"{lv}/RKNN    (26854): {m}",
    "logcat tag": lambda m, lv: f"{lv}/RKNN: {m}",
    "journald short": lambda m, lv: f"Dec 03 06:15:45 rock-5b demo[1234]: {lv} RKNN: [08:56:48.563] {m}",
    "journald short-iso": lambda m, lv: f"2026-12-03T06:15:45+0000 rock-5b demo[1234]: {lv} RKNN: {m}",
    "journald json": lambda m, lv: json.dumps(
        {"MESSAGE": f"{lv} RKNN: {m}", "PRIORITY": "3" if lv == "E" else "6", "SYSLOG_IDENTIFIER": "demo"}
    ),
    "forum quote": lambda m, lv: f"> {lv} RKNN: [08:56:48.563] {m}",
    "nested quote": lambda m, lv: f"> > {lv} RKNN: {m}",
    "ANSI colour": lambda m, lv: f"\x1b[31m{lv} RKNN: [08:56:48.563] {m}\x1b[0m",
    "CRLF": lambda m, lv: f"{lv} RKNN: [08:56:48.563] {m}\r",
}
KERNEL_WRAPPINGS = {
    "dmesg": lambda m: f"[   41.178372] {m}",
    "dmesg without stamp": lambda m: m,
    "dmesg -T": lambda m: f"[Thu Dec  3 06:15:45 2026] {m}",
    "dmesg -x": lambda m: f"kern  :err   : [   41.178372] {m}",
    "syslog priority": lambda m: f"<3>[   41.178372] {m}",
    "journald short kernel": lambda m: f"Dec 03 06:15:45 rock-5b kernel: {m}",
    "journald json kernel": lambda m: json.dumps({"MESSAGE": m, "PRIORITY": "3", "_TRANSPORT": "kernel"}),
    "forum quote": lambda m: f"> [   41.178372] {m}",
}


def _codes(text: str, encoding: str = "utf-8") -> tuple[set[str], str]:
    doc = recognise("pasted.txt", text.encode(encoding))
    ctx = Context([doc])
    findings = diagnose(ctx)
    verdict = "fault" if findings else ("unexplained" if unexplained(ctx, findings) else "clean")
    return {f.code for f in findings}, verdict


@pytest.mark.parametrize("name", sorted(WRAPPINGS))
def test_a_runtime_line_fires_in_every_wrapping(name: str) -> None:
    line = WRAPPINGS[name](RUNTIME, "E")
    assert unwrap(1, line).message.endswith(RUNTIME), unwrap(1, line)
    codes, _ = _codes(f"$ ./demo model.rknn\n{line}\n")
    assert "rknn-model-version" in codes


@pytest.mark.parametrize("name", sorted(WRAPPINGS))
def test_a_healthy_runtime_line_stays_clean_in_every_wrapping(name: str) -> None:
    codes, verdict = _codes(WRAPPINGS[name](HEALTHY, "I") + "\n")
    assert not codes and verdict == "clean"


@pytest.mark.parametrize("name", sorted(KERNEL_WRAPPINGS))
def test_a_kernel_line_fires_in_every_wrapping(name: str) -> None:
    codes, _ = _codes(KERNEL_WRAPPINGS[name](KERNEL) + "\n")
    assert "kernel-rknpu-job-timeout" in codes


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "utf-16", "gb18030"])
def test_a_log_in_any_encoding_is_read(encoding: str) -> None:
    text = f"模型名称:\t./model/RK3588/best1117.rknn\nE RKNN: [08:56:48.563] {RUNTIME}\n"
    codes, _ = _codes(text, encoding)
    assert "rknn-model-version" in codes


def test_invalid_bytes_are_shown_escaped_never_dropped() -> None:
    doc = recognise("bad.txt", b"E RKNN: failed \xff\xfe to submit!\n")
    assert "\\xff" in doc.text and "failed" in doc.text


def test_an_unknown_error_line_is_unexplained_not_clean() -> None:
    codes, verdict = _codes("E RKNN: [10:00:00.000] something nobody has seen before\n")
    assert not codes and verdict == "unexplained"


@pytest.mark.parametrize(
    "line",
    [
        "Vx delegate: error_during_invoke set to 0.",  # a setting's name, from a real VX delegate log
        "0 errors, 0 failed",
        "W rknn-toolkit-lite2 version: 2.3.2",
        "$ grep -i failed dmesg.txt",
    ],
)
def test_lines_that_only_look_like_errors_are_not_error_lines(line: str) -> None:
    assert not unwrap(1, line).is_error


def _cli(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPT), *args],
        input=stdin.decode() if stdin is not None else None,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


@pytest.mark.parametrize("kind", ["png", "elf", "directory", "fifo", "dev-zero", "one-gigabyte"])
def test_what_is_no_log_gets_one_sentence_and_exit_2_quickly(kind: str, tmp_path: Path) -> None:
    path = tmp_path / "input"
    if kind == "png":
        path.write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" + bytes(range(256)) * 4)
    elif kind == "elf":
        path.write_bytes(b"\x7fELF\x02\x01\x01\0" + b"\0" * 1000)
    elif kind == "directory":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)  # nobody ever writes: reading it would block forever
    elif kind == "dev-zero":
        path = Path("/dev/zero")
    else:
        with path.open("wb") as sparse:
            sparse.truncate(1 << 30)
    started = time.monotonic()
    run = _cli(str(path))
    assert time.monotonic() - started < 20
    assert run.returncode == 2, run.stdout + run.stderr
    assert run.stdout == "" and run.stderr.count("\n") == 1 and "Traceback" not in run.stderr
    assert str(path.name) in run.stderr or str(path) in run.stderr


def test_a_clean_log_on_standard_input_is_read_bounded() -> None:
    run = _cli("-", stdin=f"I RKNN: [10:00:00.000] {HEALTHY}\n".encode())
    assert run.returncode == 0 and "No fault found" in run.stdout


def test_the_signatures_are_listed_per_family() -> None:
    run = _cli("--signatures", "--family", "cvitek-tpu")
    assert run.returncode == 0
    ids = [line.split("\t")[0] for line in run.stdout.splitlines()[1:]]
    assert "cvimodel-chip" in ids and "kernel-smmu-fault" in ids and "rknn-model-version" not in ids
    bad = _cli("--signatures", "--family", "hailo")
    assert bad.returncode == 2 and "unknown family 'hailo'" in bad.stderr

# SPDX-License-Identifier: MIT
"""npu-diagnose as a user runs it (scripts/npu-diagnose): each finding fires on its fixture and
stays silent on a near miss; the i.MX95 A0 field report, pasted whole, names A0 silicon and the
converter statistics; exit codes 0 / 1 / 2; bad input is one sentence."""

from __future__ import annotations

import json
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "npu-diagnose"
FIXTURES = ROOT / "tests" / "fixtures" / "diagnose"
FIELD_REPORT = ROOT / "tests" / "fixtures" / "imx95-a0-field-report" / "field-report.txt"


def diagnose(*args: str | Path, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPT), *map(str, args)],
        input=stdin.decode() if stdin is not None else None,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def codes(*args: str | Path) -> tuple[set[str], subprocess.CompletedProcess[str]]:
    run = diagnose("--json", *args)
    assert run.returncode in (0, 1), run.stderr
    assert "Traceback" not in run.stderr
    doc = json.loads(run.stdout)
    assert doc["schema"] == "npu-diagnose/1"
    return {f["code"] for f in doc["findings"]}, run


# (finding code, inputs that must make it fire, inputs of a near miss that must not)
CASES = [
    ("silicon-revision", ["silicon-npu-info-a0.fires.json"], ["silicon-npu-info-b0.near-miss.json"]),
    (
        "silicon-revision",
        ["--board", "imx95-verdin", "soc0-revision-a1.fires"],
        ["--board", "imx95-verdin", "soc0-revision-b0.near-miss"],
    ),
    ("silicon-revision", ["uboot-a0.fires.log"], ["uboot-b0.near-miss.log"]),
    ("silicon-revision", [FIELD_REPORT], ["report-b0.near-miss.txt"]),
    (
        "converter-no-performance-model",
        ["converter-no-performance-model.fires.txt"],
        ["converter-no-performance-model.near-miss.txt"],
    ),
    (
        "converter-bsp-mismatch",
        ["converter-no-performance-model.near-miss.txt", "kernel-6.12.20.dmesg"],
        ["converter-no-performance-model.near-miss.txt", "kernel-6.12.49.dmesg"],
    ),
    (
        "delegate-bsp-mismatch",
        ["label-image-delegate.near-miss.log", "kernel-6.12.20.dmesg"],
        ["label-image-delegate.near-miss.log", "kernel-6.12.49.dmesg"],
    ),
    ("nothing-offloaded", ["nothing-offloaded.fires.log"], ["label-image-delegate.near-miss.log"]),
    (
        "only-dequantize-offloaded",
        ["only-dequantize-offloaded.fires.log"],
        ["label-image-verbose.near-miss.log"],
    ),
    ("xnnpack-took-over", ["xnnpack-took-over.fires.log"], ["label-image-delegate.near-miss.log"]),
    ("invoke-error", ["invoke-error.fires.log"], ["label-image-delegate.near-miss.log"]),
    ("kernel-smmu-fault", ["kernel-faults.fires.dmesg"], ["kernel-faults.near-miss.dmesg"]),
    ("kernel-remoteproc-crash", ["kernel-faults.fires.dmesg"], ["kernel-faults.near-miss.dmesg"]),
    ("kernel-firmware-load", ["kernel-faults.fires.dmesg"], ["kernel-faults.near-miss.dmesg"]),
    ("kernel-rknpu-job-timeout", ["rknpu-job-timeout.fires.dmesg"], ["rknpu-job-timeout.near-miss.dmesg"]),
    ("kernel-iommu-page-fault", ["rk-iommu-page-fault.fires.dmesg"], ["rknpu-job-timeout.near-miss.dmesg"]),
    ("kernel-cvi-tpu-timeout", ["cvi-tpu-timeout.fires.dmesg"], ["kernel-faults.near-miss.dmesg"]),
    ("rknn-model-version", ["rknn-model-version.fires.log"], ["rknn-runtime.near-miss.log"]),
    ("rknn-toolkit-runtime", ["rknn-toolkit-runtime.fires.log"], ["rknn-runtime.near-miss.log"]),
    ("rknn-server-down", ["rknn-server-down.fires.json"], ["rknn-server-running.near-miss.json"]),
    ("rknn-server-version", ["rknn-server-version.fires.txt"], ["rknn-server-version.near-miss.txt"]),
    (
        "rknn-server-version",
        ["rknn-server-start.fires.log", "rknn-runtime.near-miss.log"],
        ["rknn-runtime.near-miss.log"],
    ),
    ("cvimodel-chip", ["cvimodel-chip.fires.log"], ["cvi-model-runner.near-miss.log"]),
    ("cvi-ion-alloc", ["cvi-ion-alloc.fires.log"], ["cvi-model-runner.near-miss.log"]),
]


def _paths(items: list[str | Path]) -> list[str | Path]:
    return [
        i if isinstance(i, Path) or i.startswith("--") or i == "imx95-verdin" else FIXTURES / i for i in items
    ]


@pytest.mark.parametrize(("code", "fires", "near"), CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_finding_fires_and_near_miss_stays_silent(code: str, fires: list, near: list) -> None:
    found, _ = codes(*_paths(fires))
    assert code in found, found
    silent, _ = codes(*_paths(near))
    assert code not in silent, silent


def test_field_report_pasted_whole_names_a0_and_the_converter_statistics() -> None:
    run = diagnose(FIELD_REPORT)
    assert run.returncode == 1, run.stderr
    first, second = [line for line in run.stdout.splitlines() if line[:3] in ("1. ", "2. ")][:2]
    assert "i.MX95 A0" in first and "B0 silicon only" in first, run.stdout
    assert "Clock Frequency: 0.000000 MHz" in second and "did not really compile" in second, run.stdout
    assert "label_image" in run.stdout.splitlines()[1] and "neutron-converter" in run.stdout.splitlines()[1]
    assert 'evidence field-report.txt:12: "Clock Frequency: 0.000000 MHz"' in run.stdout
    # the A0 evidence is the report's own sentence, cut to the part around "(A0)"
    assert "シリコンリビジョン(A0)" in run.stdout


def test_field_report_on_stdin_and_with_board_profile() -> None:
    run = diagnose("--board", "imx95-verdin", "-", stdin=FIELD_REPORT.read_bytes())
    assert run.returncode == 1 and "stdin:" in run.stdout and "i.MX95 A0" in run.stdout


def test_clean_inputs_exit_0() -> None:
    run = diagnose(FIXTURES / "label-image-delegate.near-miss.log", FIXTURES / "kernel-6.12.49.dmesg")
    assert run.returncode == 0, run.stdout
    assert "No fault found" in run.stdout


def test_nothing_readable_exits_2_with_one_sentence(tmp_path: Path) -> None:
    junk = tmp_path / "notes.txt"
    junk.write_text("shopping list: milk, eggs\n")
    run = diagnose(junk)
    assert run.returncode == 2
    assert run.stderr.count("\n") == 1 and "nothing in notes.txt" in run.stderr


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["/nonexistent/log.txt"], "/nonexistent/log.txt is not a file"),
        (["--board", "no-such-board", "x"], "Unknown board profile 'no-such-board'"),
        ([], "the following arguments are required: FILE"),
    ],
)
def test_bad_usage_is_one_sentence_exit_2(args: list[str], words: str) -> None:
    run = diagnose(*args)
    assert run.returncode == 2
    assert words in run.stderr and run.stderr.count("\n") == 1 and "Traceback" not in run.stderr


def test_evidence_is_escaped_and_bounded(tmp_path: Path) -> None:
    log = tmp_path / "dmesg.txt"
    log.write_text("[    1.000000] " + "x" * 500 + "\x1b[31m rknpu RKNPU: job timeout, flags: 0x0:\n")
    run = diagnose("--board", "rk3588-evb", log)
    assert run.returncode == 1
    evidence = next(line for line in run.stdout.splitlines() if "evidence" in line)
    assert "\x1b" not in evidence and "\\x1b" in evidence and "job timeout" in evidence
    assert len(evidence) < 260


def _npy(path: Path, array: np.ndarray) -> Path:
    np.save(path, array)
    return path


def test_degenerate_npu_output_against_cpu_reference(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    cpu = rng.uniform(0, 1, (172, 6)).astype(np.float32)
    healthy = cpu + rng.normal(0, 0.004, cpu.shape).astype(np.float32)
    collapsed = np.tile(np.array([0.5, 0.5, 0.227, 0.227, 0.227, 0.227], np.float32), (172, 1))
    ref = _npy(tmp_path / "cpu_out0.npy", cpu)
    found, _ = codes(ref, _npy(tmp_path / "npu_out0.npy", collapsed))
    assert "degenerate-output" in found
    clean, run = codes(ref, _npy(tmp_path / "npu_healthy.npy", healthy))
    assert "degenerate-output" not in clean and run.returncode == 0


def _rknn(version: str) -> bytes:
    description = json.dumps({"version": version, "target_platform": ["rk3588"]}).encode()
    data = b"\0" * 16
    return (
        b"RKNN"
        + b"\0" * 4
        + struct.pack("<QQ", 6, len(data))
        + b"\0" * 40
        + data
        + struct.pack("<Q", len(description))
        + description
    )


def test_rknn_model_header_against_the_board_runtime(tmp_path: Path) -> None:
    info = FIXTURES / "rknn-server-running.near-miss.json"  # librknnrt 2.3.2 on the board
    newer = tmp_path / "newer.rknn"
    newer.write_bytes(_rknn("2.4.0"))
    found, _ = codes(newer, info)
    assert "rknn-toolkit-runtime" in found
    same = tmp_path / "same.rknn"
    same.write_bytes(_rknn("2.3.2"))
    silent, _ = codes(same, info)
    assert "rknn-toolkit-runtime" not in silent


def _cvimodel(chip: str) -> bytes:
    header = b"CviModel" + struct.pack("<I", 0) + bytes([1, 2]) + b"\0" * 16 + chip.encode().ljust(16, b"\0")
    return header.ljust(64, b"\0")


def test_cvimodel_built_for_another_chip(tmp_path: Path) -> None:
    wrong = tmp_path / "m.cvimodel"
    wrong.write_bytes(_cvimodel("cv180x"))
    found, _ = codes("--board", "milkv-duo256m", wrong)
    assert "cvimodel-chip" in found
    right = tmp_path / "r.cvimodel"
    right.write_bytes(_cvimodel("cv181x"))
    silent, _ = codes("--board", "milkv-duo256m", right)
    assert "cvimodel-chip" not in silent


def test_entry_point_is_declared() -> None:
    text = (ROOT / "pyproject.toml").read_text()
    assert 'npu-diagnose = "npu_accept.diagnose.cli:main"' in text
    assert sys.executable


def test_documented_example_is_the_real_output() -> None:
    doc = (ROOT / "docs" / "npu-diagnose.md").read_text()
    command = "$ npu-diagnose tests/fixtures/imx95-a0-field-report/field-report.txt\n"
    shown = doc.split(command, 1)[1].split("\n$ echo $?", 1)[0]
    assert diagnose(FIELD_REPORT).stdout.rstrip() == shown.rstrip()

# SPDX-License-Identifier: MIT
"""The compare engine and npu-compare: seed-000 failure patterns, the uint8/zero-point trap, and
real outputs of MediaPipe's face detector on a real photograph."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from ai_edge_litert.interpreter import Interpreter, OpResolverType
from models import FACE_DETECTION, FACE_LANDMARK, face_detection_input, face_landmark_input, model_path

from npu_accept import compare as cmp

REPO = Path(__file__).resolve().parents[1]
RNG = np.random.default_rng(2026)
SEED_ROW = [0.5, 0.5, 0.227, 0.227, 0.227, 0.227]  # seed 000: every anchor of the NPU output


def _infer(model: Path, x: np.ndarray, xnnpack: bool) -> list[np.ndarray]:
    kwargs = {} if xnnpack else {"experimental_op_resolver_type": OpResolverType.BUILTIN_REF}
    interpreter = Interpreter(model_path=str(model), **kwargs)
    interpreter.allocate_tensors()
    interpreter.set_tensor(interpreter.get_input_details()[0]["index"], x)
    interpreter.invoke()
    return [interpreter.get_tensor(o["index"]).copy() for o in interpreter.get_output_details()]


@pytest.fixture(scope="module")
def detector() -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Face detector outputs with XNNPACK and with TFLite's reference kernels (two real CPU runs)."""
    path, x = model_path(FACE_DETECTION), face_detection_input()
    return _infer(path, x, True), _infer(path, x, False)


@pytest.fixture(scope="module")
def landmarks() -> np.ndarray:
    return _infer(model_path(FACE_LANDMARK), face_landmark_input(), True)[0]


def _detector_reference() -> np.ndarray:
    """A plausible CPU output of seed 000's detector: 172 anchors [bg, face, xmin, ymin, xmax, ymax]."""
    ref = np.empty((172, 6))
    ref[:, 1] = RNG.uniform(0.0, 0.05, 172)
    ref[:, 0] = 1.0 - ref[:, 1]
    ref[:, 2:4] = RNG.uniform(0.0, 0.6, (172, 2))
    ref[:, 4:6] = ref[:, 2:4] + RNG.uniform(0.05, 0.4, (172, 2))
    ref[17, :2] = [0.004, 0.996]  # the one clean detection
    return ref


# --- seed-000 patterns -------------------------------------------------------------------------


def test_seed000_identical_anchor_rows_fail() -> None:
    out = np.tile(SEED_ROW, (172, 1)) + RNG.normal(0, 1e-4, (172, 6))
    verdict = cmp.compare(_detector_reference(), out)
    assert not verdict.passed and verdict.degenerate
    assert "172 rows" in verdict.sentence and "0.227" in verdict.sentence


def test_seed000_identical_anchor_rows_fail_quantized() -> None:
    scale, zero = 1 / 255, 0
    ref = np.round(_detector_reference() / scale).clip(0, 255).astype(np.uint8)
    out = np.tile(np.round(np.array(SEED_ROW) / scale).astype(np.uint8), (172, 1))
    verdict = cmp.compare(ref, out, ref_quant=(scale, zero), out_quant=(scale, zero))
    assert not verdict.passed and "rows" in verdict.degenerate


def test_seed000_landmarks_one_repeated_constant_fail() -> None:
    ref = RNG.uniform(0.2, 0.8, (1, 70))
    out = np.full((1, 70), 0.4117)
    verdict = cmp.compare(ref, out)
    assert not verdict.passed
    assert verdict.degenerate.startswith("all 70 output values are one repeated constant")


def test_uint8_128_trap_raw_cosine_passes_but_verdict_fails() -> None:
    ref = np.clip(128 + RNG.normal(0, 6, (1, 1001)), 0, 255).astype(np.uint8)
    out = np.full((1, 1001), 128, np.uint8)
    raw = cmp.cosine(ref.astype(np.float64).ravel(), out.astype(np.float64).ravel())
    assert raw > 0.99  # STACKS.md: ~0.9989, plain cosine would pass
    verdict = cmp.compare(ref, out, ref_quant=(0.00390625, 128), out_quant=(0.00390625, 128))
    assert not verdict.passed and verdict.degenerate == "all 1001 output values are zero"


@pytest.mark.parametrize(
    "bad, words",
    [
        (np.array([[0.1, np.nan, 0.3, 0.4]]), "NaN or Inf"),
        (np.zeros((4, 4)), "are zero"),
        (np.full((4, 4), 7.0), "repeated constant"),
        (np.round(RNG.uniform(0, 1, (10, 10))), "distinct value"),
    ],
)
def test_degenerate_patterns(bad: np.ndarray, words: str) -> None:
    ref = RNG.uniform(-1, 1, bad.shape)
    verdict = cmp.compare(ref, bad)
    assert not verdict.passed and words in verdict.sentence


def test_degenerate_is_judged_against_the_reference() -> None:
    zeros = np.zeros((8, 4))
    assert cmp.compare(zeros, zeros).passed  # the CPU says zeros too: not a fault
    assert cmp.degenerate(np.zeros((8, 4), np.int8), 0.1, 0) == "all 32 output values are zero"
    assert cmp.degenerate(RNG.uniform(size=(8, 4))) is None


# --- real outputs ------------------------------------------------------------------------------


def test_real_cpu_vs_cpu_passes(detector) -> None:
    xnn, ref_kernels = detector
    for ref, out in zip(xnn, ref_kernels, strict=True):
        verdict = cmp.compare(ref, out)
        assert verdict.passed, verdict.sentence
        assert verdict.metrics["cosine"] > 0.999


def test_real_output_constant_copy_fails(detector) -> None:
    for ref in detector[0]:
        verdict = cmp.compare(ref, np.full_like(ref, float(ref.mean())))
        assert not verdict.passed and verdict.degenerate


def test_real_output_collapsed_rows_fail(detector) -> None:
    regressors = detector[0][0]
    collapsed = np.broadcast_to(regressors.mean(axis=1, keepdims=True), regressors.shape).copy()
    verdict = cmp.compare(regressors, collapsed)
    assert not verdict.passed and "896 rows" in verdict.sentence


def test_real_output_perturbed_fails(detector) -> None:
    ref = detector[0][0]
    noisy = ref + RNG.normal(0, 0.5 * float(ref.std()), ref.shape).astype(np.float32)
    verdict = cmp.compare(ref, noisy)
    assert not verdict.passed and verdict.degenerate is None
    assert "below the threshold" in verdict.sentence


def test_real_output_scaled_fails_although_cosine_is_perfect(landmarks) -> None:
    verdict = cmp.compare(landmarks, landmarks * 2.0)
    assert verdict.metrics["cosine"] > 0.9999
    assert not verdict.passed and verdict.sentence.startswith("euclidean similarity")


def test_real_output_quantized_round_trip_passes(landmarks) -> None:
    lo, hi = float(landmarks.min()), float(landmarks.max())
    scale = (hi - lo) / 255.0
    zero = int(round(-lo / scale))
    q = np.clip(np.round(landmarks / scale) + zero, 0, 255).astype(np.uint8)
    verdict = cmp.compare(landmarks, q, out_quant=(scale, zero))
    assert verdict.passed, verdict.sentence


def test_profile_max_abs_threshold_applies(landmarks) -> None:
    shifted = landmarks + 0.1
    assert cmp.compare(landmarks, shifted).passed
    verdict = cmp.compare(landmarks, shifted, thresholds={"max_abs": 0.05})
    assert not verdict.passed and verdict.sentence.startswith("max abs error")


def test_bad_arguments_raise_one_sentence() -> None:
    with pytest.raises(ValueError, match="shape"):
        cmp.compare(np.zeros((2, 3)), np.zeros((3, 3)))
    with pytest.raises(ValueError, match="unknown threshold 'cosin'"):
        cmp.compare(np.ones(3), np.ones(3), thresholds={"cosin": 0.9})


def test_metric_definitions() -> None:
    a, b = np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.0, 4.0])
    assert cmp.euclid_similarity(a, b) == pytest.approx(1 - 1 / np.linalg.norm((a + b) / 2))
    assert cmp.sqnr_db(a, b) == pytest.approx(10 * np.log10(14 / 1))
    assert cmp.top_k_agreement(np.arange(10.0), np.arange(10.0)[::-1], 3) == 0.0
    assert cmp.dequantize(np.array([130], np.uint8), 0.5, 128)[0] == 1.0


# --- npu-compare -------------------------------------------------------------------------------


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "npu_accept.compare_cli", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={"PYTHONPATH": str(REPO / "src"), "PATH": "/usr/bin:/bin"},
        check=False,
    )


@pytest.fixture()
def dumps(tmp_path: Path, landmarks) -> dict[str, Path]:
    files = {
        "ref": landmarks,
        "same": landmarks.copy(),
        "const": np.full_like(landmarks, 0.4117),
        "ref_u8": np.clip(128 + RNG.normal(0, 6, (1, 1001)), 0, 255).astype(np.uint8),
        "out_u8": np.full((1, 1001), 128, np.uint8),
        "shifted": landmarks + 0.1,
        "other_shape": np.zeros((3, 3), np.float32),
    }
    paths = {}
    for name, array in files.items():
        paths[name] = tmp_path / f"{name}.npy"
        np.save(paths[name], array)
    paths["text"] = tmp_path / "text.npy"
    paths["text"].write_text("hello")
    return paths


def test_cli_match_and_mismatch(dumps: dict[str, Path]) -> None:
    ok = _cli(str(dumps["ref"]), str(dumps["same"]))
    assert ok.returncode == 0 and "MATCH" in ok.stdout and "cosine" in ok.stdout
    bad = _cli(str(dumps["ref"]), str(dumps["const"]))
    assert bad.returncode == 1 and "MISMATCH: the output is degenerate" in bad.stdout


def test_cli_dequantizes_with_scale_and_zero_point(dumps: dict[str, Path]) -> None:
    run = _cli(str(dumps["ref_u8"]), str(dumps["out_u8"]), "--scale", "0.00390625", "--zero-point", "128")
    assert run.returncode == 1 and "are zero" in run.stdout


def test_cli_profile_thresholds(dumps: dict[str, Path]) -> None:
    assert _cli(str(dumps["ref"]), str(dumps["shifted"])).returncode == 0
    profile = str(REPO / "pytests" / "profiles" / "imx95-verdin.yaml")
    run = _cli(
        str(dumps["ref"]), str(dumps["shifted"]), "--profile", profile, "--model", "mobilenet_v1_quant"
    )
    assert run.returncode == 1 and "max abs error" in run.stdout


@pytest.mark.parametrize(
    "case", ["missing", "not-npy", "shape", "int-no-scale", "profile-no-model", "unknown-model", "bad-flag"]
)
def test_cli_bad_input_exit_2(case: str, dumps: dict[str, Path], tmp_path: Path) -> None:
    profile = str(REPO / "pytests" / "profiles" / "imx95-verdin.yaml")
    args, word = {
        "missing": ([str(dumps["ref"]), str(tmp_path / "nope.npy")], "nope.npy"),
        "not-npy": ([str(dumps["ref"]), str(dumps["text"])], "not a .npy"),
        "shape": ([str(dumps["ref"]), str(dumps["other_shape"])], "shape"),
        "int-no-scale": ([str(dumps["ref_u8"]), str(dumps["out_u8"])], "--scale"),
        "profile-no-model": ([str(dumps["ref"]), str(dumps["same"]), "--profile", profile], "--model"),
        "unknown-model": (
            [str(dumps["ref"]), str(dumps["same"]), "--profile", profile, "--model", "x"],
            "no model 'x'",
        ),
        "bad-flag": ([str(dumps["ref"]), str(dumps["same"]), "--frobnicate"], "--frobnicate"),
    }[case]
    run = _cli(*args)
    assert run.returncode == 2 and run.stdout == ""
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and word in lines[0] and "Traceback" not in run.stderr

# SPDX-License-Identifier: MIT
"""The compare engine and npu-compare: the i.MX95 A0 field report's failure patterns, the
uint8/zero-point trap, and real outputs of MediaPipe's face detector on a real photograph."""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from ai_edge_litert.interpreter import Interpreter, OpResolverType
from models import FACE_DETECTION, FACE_LANDMARK, face_detection_input, face_landmark_input, model_path

from npu_accept import compare as cmp
from npu_accept.paths import packaged_profiles_dir
from npu_accept.tensorstream import Distinct

REPO = Path(__file__).resolve().parents[1]
RNG = np.random.default_rng(2026)
SEED_ROW = [0.5, 0.5, 0.227, 0.227, 0.227, 0.227]  # A0 field report: every anchor of the NPU output


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
    """A plausible CPU output of the A0 field report's detector: 172 anchors
    [bg, face, xmin, ymin, xmax, ymax]."""
    ref = np.empty((172, 6))
    ref[:, 1] = RNG.uniform(0.0, 0.05, 172)
    ref[:, 0] = 1.0 - ref[:, 1]
    ref[:, 2:4] = RNG.uniform(0.0, 0.6, (172, 2))
    ref[:, 4:6] = ref[:, 2:4] + RNG.uniform(0.05, 0.4, (172, 2))
    ref[17, :2] = [0.004, 0.996]  # the one clean detection
    return ref


# --- A0 field report patterns ----------------------------------------------------------------


def test_a0_field_report_identical_anchor_rows_fail() -> None:
    out = np.tile(SEED_ROW, (172, 1)) + RNG.normal(0, 1e-4, (172, 6))
    verdict = cmp.compare(_detector_reference(), out)
    assert not verdict.passed and verdict.degenerate
    assert "172 rows" in verdict.sentence and "0.227" in verdict.sentence


def test_a0_field_report_identical_anchor_rows_fail_quantized() -> None:
    scale, zero = 1 / 255, 0
    ref = np.round(_detector_reference() / scale).clip(0, 255).astype(np.uint8)
    out = np.tile(np.round(np.array(SEED_ROW) / scale).astype(np.uint8), (172, 1))
    verdict = cmp.compare(ref, out, ref_quant=(scale, zero), out_quant=(scale, zero))
    assert not verdict.passed and "rows" in verdict.degenerate


def test_a0_field_report_landmarks_one_repeated_constant_fail() -> None:
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


# --- top-k only along a class axis ----------------------------------------------------------------


def _int8_round_trip(ref: np.ndarray, flip: float = 0.3) -> tuple[np.ndarray, tuple[float, int]]:
    """What a healthy int8 NPU gives: the reference quantized per tensor, and 30 % of the values
    one step off (rounding differences between the NPU's kernels and the CPU's)."""
    rng = np.random.default_rng(8)
    lo, hi = float(ref.min()), float(ref.max())
    scale = (hi - lo) / 255.0
    zero = int(round(-lo / scale)) - 128
    q = np.round(ref / scale) + zero + rng.integers(-1, 2, ref.shape) * (rng.random(ref.shape) < flip)
    return np.clip(q, -128, 127).astype(np.int8), (scale, zero)


def _softmax(logits: np.ndarray) -> np.ndarray:
    e = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def test_healthy_detector_with_int8_noise_passes_by_default() -> None:
    ref = _detector_reference()
    step = np.random.default_rng(6).integers(-1, 2, ref.shape)
    out = np.clip(np.round(ref * 255) + step, 0, 255).astype(np.uint8)
    # The old rule, top-5 over the flattened tensor, calls this healthy output broken: the 172
    # background scores near 1.0 are near-ties that one quantization step reorders.
    assert cmp.top_k_agreement(ref, out / 255.0, 5) < 0.8
    verdict = cmp.compare(ref, out, out_quant=(1 / 255, 0))
    assert verdict.passed, verdict.sentence
    assert verdict.metrics["top_k_agree"] is None and "top_k_agree" not in verdict.thresholds
    assert verdict.top_k_rule.startswith("not judged: the reference is not class scores")


def test_real_detector_with_int8_noise_passes_by_default(detector) -> None:
    for ref in detector[0]:
        out, quant = _int8_round_trip(ref)
        verdict = cmp.compare(ref, out, out_quant=quant)
        assert verdict.passed, verdict.sentence
        assert verdict.metrics["top_k_agree"] is None and verdict.metrics["sqnr_db"] > 30


def test_a0_field_report_patterns_still_fail_with_int8_outputs() -> None:
    ref = _detector_reference()
    rows = np.tile(np.round(np.array(SEED_ROW) * 255).astype(np.uint8), (172, 1))
    verdict = cmp.compare(ref, rows, out_quant=(1 / 255, 0))
    assert not verdict.passed and verdict.pattern == "identical-rows"
    landmarks = RNG.uniform(0.2, 0.8, (1, 70))
    verdict = cmp.compare(landmarks, np.full((1, 70), 105, np.uint8), out_quant=(1 / 255, 0))
    assert not verdict.passed and verdict.pattern == "constant"


def _classifier() -> np.ndarray:
    """A softmax over 1001 classes with five clear leaders, quantized as TFLite does (uint8, 1/256)."""
    logits = np.random.default_rng(1001).normal(0, 1.0, 1001)
    logits[[3, 77, 400, 512, 900]] += [9.0, 8.0, 7.5, 7.0, 6.5]
    return np.clip(np.round(_softmax(logits) * 256), 0, 255).astype(np.uint8)[None]


def test_classification_vector_gets_top_k_by_default() -> None:
    ref, rng = _classifier(), np.random.default_rng(9)
    noisy = np.clip(ref.astype(int) + rng.integers(-1, 2, ref.shape) * (rng.random(ref.shape) < 0.3), 0, 255)
    quant = (1 / 256, 0)
    verdict = cmp.compare(ref, noisy.astype(np.uint8), ref_quant=quant, out_quant=quant)
    assert verdict.passed, verdict.sentence
    assert verdict.metrics["top_k_agree"] == 1.0
    assert verdict.top_k_rule == "top-5 over 1001 classes (the reference rows are probability distributions)"


def test_classification_vector_with_other_leaders_fails_on_top_k() -> None:
    # Cosine, euclid and SQNR all pass: only the ranking of the five leaders tells them apart.
    ref, out = np.full(1001, 1.0), np.full(1001, 1.0)
    ref[[3, 77, 400, 512, 900]] = 1.5
    out[[4, 78, 401, 513, 901]] = 1.5
    verdict = cmp.compare((ref / ref.sum())[None], (out / out.sum())[None])
    assert verdict.metrics["cosine"] > 0.99 and verdict.metrics["sqnr_db"] > 20
    assert not verdict.passed
    assert verdict.sentence == "top-5 agreement 0.00 is below the threshold 0.80 after dequantization."


def _close_calls() -> tuple[np.ndarray, np.ndarray]:
    """[8, 10] class scores whose two leaders are close (0.25, 0.24); the output swaps them in
    four rows."""
    rng = np.random.default_rng(10)
    ref = np.empty((8, 10))
    for row in ref:
        jitter = rng.uniform(-0.01, 0.01, 8)
        rest = 0.51 / 8 + jitter - jitter.mean()  # the other eight share 0.51, each far below 0.24
        row[:] = rng.permutation(np.concatenate([[0.25, 0.24], rest]))
    leaders = np.argsort(-ref, axis=1)[:, :2]
    out = ref.copy()
    for row in range(4):
        out[row, leaders[row]] = ref[row, leaders[row][::-1]]
    return ref, out


def test_class_axis_of_scores_is_judged_per_row() -> None:
    ref, out = _close_calls()
    verdict = cmp.compare(ref, out, {"top_k": 1})
    assert verdict.metrics["top_k_agree"] == 0.5 and verdict.metrics["cosine"] > 0.99
    assert verdict.top_k_rule == "top-1 per row of 10 classes (asked for)"
    assert not verdict.passed and verdict.sentence.startswith("top-1 agreement 0.50")
    assert cmp.compare(ref, out).metrics["top_k_agree"] == 1.0  # top-5 of 10: the swap stays inside


def test_profile_may_ask_for_top_k_on_any_tensor() -> None:
    ref = _detector_reference()
    verdict = cmp.compare(ref, ref[::-1].copy(), {"top_k_agree": 0.8})
    assert verdict.top_k_rule == "top-5 per row of 6 classes (asked for)"
    assert verdict.metrics["top_k_agree"] is not None
    assert cmp.compare(ref, ref, {"top_k": 3}).metrics["top_k_agree"] == 1.0


def test_degenerate_detector_is_a_public_record() -> None:
    found = cmp.detect_degenerate(np.tile(SEED_ROW, (172, 1)), _detector_reference())
    assert isinstance(found, cmp.Degeneracy) and found.pattern == "identical-rows"
    assert found.reason.startswith("all 172 rows of the output are the same [0.5, 0.5, 0.227")
    assert cmp.detect_degenerate(np.zeros(8, np.int8), out_quant=(0.1, 0)).pattern == "all-zero"
    assert cmp.detect_degenerate(np.array([1.0, np.inf])).pattern == "non-finite"
    assert cmp.detect_degenerate(np.empty(0)).pattern == "empty"
    assert cmp.detect_degenerate(RNG.uniform(size=(8, 4))) is None


# --- streaming -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "shape",
    [(300_000,), (1, 700, 1001), (3, 2_100_000), (2, 40_000)],
    ids=["long-vector", "rows", "long-rows", "wide-rows"],
)
def test_streamed_files_give_the_whole_array_verdict(tmp_path: Path, shape: tuple[int, ...]) -> None:
    ref = RNG.normal(0, 1, shape).astype(np.float32)
    out = (ref + RNG.normal(0, 0.05, shape)).astype(np.float32)
    np.save(tmp_path / "ref.npy", ref)
    np.save(tmp_path / "out.npy", out)
    streamed = cmp.compare(
        cmp.Tensor.from_npy(tmp_path / "ref.npy"), cmp.Tensor.from_npy(tmp_path / "out.npy"), {"top_k": 5}
    )
    a, b = ref.astype(np.float64).ravel(), out.astype(np.float64).ravel()
    assert streamed.metrics["cosine"] == pytest.approx(a @ b / np.sqrt((a @ a) * (b @ b)), abs=1e-6)
    assert streamed.metrics["sqnr_db"] == pytest.approx(
        10 * np.log10((a @ a) / ((a - b) @ (a - b))), abs=1e-3
    )
    assert streamed.metrics["max_abs"] == pytest.approx(np.max(np.abs(a - b)))
    rows = ref.reshape(-1, shape[-1]), out.reshape(-1, shape[-1])
    per_row = [cmp.top_k_agreement(r, o, 5) for r, o in zip(*rows, strict=True)]
    assert streamed.metrics["top_k_agree"] == pytest.approx(np.mean(per_row), abs=1e-4)


def test_streamed_top_k_breaks_ties_like_a_stable_sort() -> None:
    ref = np.zeros(200_000)
    ref[[5, 150_000, 199_999]] = 1.0  # the other two of the top-5 are the lowest-index zeros
    out = ref.copy()
    out[[0, 1]] = -1.0  # so the output's top-5 takes indices 2 and 3 instead
    assert cmp.top_k_agreement(ref, out, 5) == 0.6
    assert cmp.compare(ref, out, {"top_k": 5}).metrics["top_k_agree"] == 0.6


def _distinct_count(chunks: list[np.ndarray], cap: int) -> int:
    """What Distinct counts, by its definition: distinct values up to the cap, where a NaN never
    equals anything seen, so one fills the count."""
    seen: set[float] = set()
    for chunk in chunks:
        for value in chunk.tolist():
            if len(seen) >= cap:
                return cap
            if value != value:
                return cap
            seen.add(value)
    return min(len(seen), cap)


@pytest.mark.parametrize("cap", [1, 4, 16])
def test_distinct_values_are_counted_up_to_the_cap(cap: int) -> None:
    rng = np.random.default_rng(cap)
    cases = [
        rng.normal(size=5000).astype(np.float32),
        rng.integers(0, 3, 5000).astype(np.uint8),
        rng.integers(0, 20, 5000).astype(np.int8),
        np.repeat(rng.normal(size=40), 200),  # distinct values only late in a chunk
        np.array([0.0, -0.0] * 900 + [1.0, 2.0, 3.0]),
        np.where(rng.uniform(size=3000) < 0.01, np.nan, rng.integers(0, 2, 3000)).astype(np.float64),
        np.full(4000, np.nan),
        np.full(3000, 7.0, np.float32),
        np.empty(0, np.float32),
    ]
    for values in cases:
        for pieces in (1, 3, 17):
            chunks = np.array_split(values, pieces)
            distinct = Distinct(cap)
            for chunk in chunks:
                distinct.add(chunk)
            assert distinct.count == _distinct_count(chunks, cap), (values[:8], pieces)


def test_fortran_order_file_is_compared_in_c_order(tmp_path: Path) -> None:
    ref = RNG.normal(0, 1, (40, 30))
    np.save(tmp_path / "ref.npy", ref)
    np.save(tmp_path / "out.npy", np.asfortranarray(ref))
    verdict = cmp.compare(
        cmp.Tensor.from_npy(tmp_path / "ref.npy"), cmp.Tensor.from_npy(tmp_path / "out.npy")
    )
    assert verdict.passed and verdict.metrics["max_abs"] == 0.0


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
    profile = str(packaged_profiles_dir() / "imx95-verdin.yaml")
    run = _cli(
        str(dumps["ref"]), str(dumps["shifted"]), "--profile", profile, "--model", "mobilenet_v1_quant"
    )
    assert run.returncode == 1 and "max abs error" in run.stdout


@pytest.mark.parametrize(
    "case", ["missing", "not-npy", "shape", "int-no-scale", "profile-no-model", "unknown-model", "bad-flag"]
)
def test_cli_bad_input_exit_2(case: str, dumps: dict[str, Path], tmp_path: Path) -> None:
    profile = str(packaged_profiles_dir() / "imx95-verdin.yaml")
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


def test_cli_healthy_detector_no_profile_is_a_match(tmp_path: Path) -> None:
    ref = _detector_reference()
    np.save(tmp_path / "ref.npy", ref)
    np.save(tmp_path / "out.npy", ref + RNG.uniform(-0.5 / 255, 0.5 / 255, ref.shape))
    run = _cli(str(tmp_path / "ref.npy"), str(tmp_path / "out.npy"))
    assert run.returncode == 0, run.stdout + run.stderr
    assert "not judged: the reference is not class scores" in run.stdout


def test_cli_top_k_option_asks_for_it(dumps: dict[str, Path]) -> None:
    run = _cli(str(dumps["ref"]), str(dumps["same"]), "--top-k", "3", "--json")
    assert run.returncode == 0
    assert '"top_k_rule": "top-3 over 1404 classes (asked for)"' in run.stdout


def _lying(path: Path) -> Path:
    header = b"{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000000,), }"
    header += b" " * (117 - len(header)) + b"\n"
    path.write_bytes(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header + b"\0" * 64)
    return path


@pytest.mark.parametrize(
    "case", ["complex", "pickle", "lying-header", "directory", "top-k-0", "bad-threshold"]
)
def test_cli_refuses_hostile_input_exit_2(case: str, dumps: dict[str, Path], tmp_path: Path) -> None:
    pickled = tmp_path / "objects.npy"
    np.save(pickled, np.array([{"x": 1}, None], dtype=object), allow_pickle=True)
    complex_file = tmp_path / "complex.npy"
    np.save(complex_file, np.ones((1, 1404), np.complex64))
    profile = tmp_path / "profile.yaml"
    ref = str(dumps["ref"])
    args, word = {
        "complex": ([ref, str(complex_file)], "complex64"),
        "pickle": ([ref, str(pickled)], "pickle"),
        "lying-header": ([ref, str(_lying(tmp_path / "lying.npy"))], "holds 64 bytes"),
        "directory": ([ref, str(tmp_path)], "is a directory"),
        "top-k-0": ([ref, ref, "--top-k", "0"], "--top-k must be at least 1"),
        "bad-threshold": ([ref, ref, "--profile", str(profile), "--model", "m"], "profile.yaml"),
    }[case]
    profile.write_text("schema: npu-profile/1\n")
    run = _cli(*args)
    assert run.returncode == 2 and run.stdout == ""
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and word in lines[0] and "Traceback" not in run.stderr


def test_cli_memory_stays_far_below_one_input(tmp_path: Path) -> None:
    values = np.random.default_rng(3).standard_normal(1 << 23, dtype=np.float32)  # 32 MiB per file
    np.save(tmp_path / "ref.npy", values)
    np.save(tmp_path / "out.npy", values + np.float32(0.01))
    del values
    idle = _cli_limited(None, "-c", RSS_PEAK).stdout.split()
    run = _cli_limited(None, "-c", RSS_PEAK, str(tmp_path / "ref.npy"), str(tmp_path / "out.npy"))
    code, peak = run.stdout.split()[-2:]
    assert code == "0", run.stdout + run.stderr
    assert int(peak) - int(idle[1]) < 8 * 1024, f"{peak} KiB against {idle[1]} KiB idle"


def test_cli_out_of_memory_is_exit_2_not_a_traceback(tmp_path: Path) -> None:
    # Fortran-ordered files are the one case read whole; under an address-space limit they no
    # longer fit, and numpy's MemoryError must still end as one sentence and exit 2.
    array = np.asfortranarray(np.zeros((1024, 16384), np.float32))  # 64 MiB
    for name in ("ref.npy", "out.npy"):
        np.save(tmp_path / name, array)
    probe = _cli_limited(None, "-c", VM_PEAK)
    base = int(probe.stdout.strip() or 0)
    assert base > 0, probe.stderr
    files = (str(tmp_path / "ref.npy"), str(tmp_path / "out.npy"))
    run = _cli_limited(base + 100 * 2**20, "-m", "npu_accept.compare_cli", *files)
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.strip() == "npu-compare: ran out of memory; free memory or compare smaller tensors."


VM_PEAK = (
    "import npu_accept.compare_cli\n"
    "status = open('/proc/self/status').read()\n"
    "print(int(status.split('VmPeak:')[1].split()[0]) * 1024)"
)
# Runs npu-compare on argv[1:] and prints its exit code and its peak RSS since exec (VmHWM, KiB).
RSS_PEAK = (
    "import sys\n"
    "from npu_accept.compare_cli import main\n"
    "code = main(sys.argv[1:]) if len(sys.argv) > 1 else 0\n"
    "status = open('/proc/self/status').read()\n"
    "print(code, status.split('VmHWM:')[1].split()[0])"
)


def _cli_limited(limit: int | None, *args: str) -> subprocess.CompletedProcess[str]:
    """Python with an address-space limit (RLIMIT_AS) of `limit` bytes."""

    def apply() -> None:
        if limit is not None:
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return subprocess.run(
        [sys.executable, *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={"PYTHONPATH": str(REPO / "src"), "PATH": "/usr/bin:/bin"},
        preexec_fn=apply,
        check=False,
    )

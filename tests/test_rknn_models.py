# SPDX-License-Identifier: MIT
"""The committed .rknn models and golden outputs (scripts/make-rknn-models, recipe
npu-model-mediapipe-rknn) and the rk3588-evb/rk3576-evb profiles that use them.

Without rknn-toolkit2: the committed files against their manifest (sha256, quantization found in
the model file, goldens on the INT8 grid, inputs = the photo the other tests use), the goldens
against real TFLite on the CPU with the profiles' thresholds, npu-run's rknn backend on the
stand-in librknnrt replaying recorded outputs, and the suite on Rockchip twins that replay the
goldens (healthy) or broken outputs (faulty). With the toolkit (RKNN_TOOLKIT_PYTHON, or this
interpreter with the `rknn` extra): the script rebuilds a model and must reproduce the manifest.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import struct
import subprocess
import sys
from pathlib import Path

import models
import numpy as np
import pytest
from loadscript import load_script
from npu_tools import run_tool
from twins.boards_rockchip import build_runtime
from twins.rknn_models import (
    LAYER_FILES,
    MANIFEST,
    PROFILE_DATA,
    fnv64,
    load_manifest,
    quantize,
    recording,
    twin_files,
)

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "make-rknn-models"
PROFILES = ROOT / "src" / "npu_accept" / "profiles"
RECIPE = LAYER_FILES.parent / "npu-model-mediapipe-rknn_0.10.14.bb"
MAX_COMMITTED_BYTES = 5 * 1024 * 1024
SOCS = ("rk3588", "rk3576")
MANIFEST_DATA = load_manifest()
MODEL_NAMES = sorted(MANIFEST_DATA["models"])


def script_module():  # noqa: ANN201 (the script as a module)
    return load_script("make-rknn-models")


def entries() -> list[tuple[str, str, dict]]:
    return [(name, soc, MANIFEST_DATA["models"][name]["socs"][soc]) for name in MODEL_NAMES for soc in SOCS]


# --- the committed files -------------------------------------------------------------------


def test_every_committed_file_has_the_manifests_sha256() -> None:
    module = script_module()
    assert module.verify_committed(MANIFEST_DATA) == []
    # One copy each, in the layer: 2 inputs, per model and SoC a .rknn file and 2 goldens.
    assert len(module.committed_files(MANIFEST_DATA)) == 2 + 2 * 2 * (1 + 2)


def test_the_profiles_goldens_are_links_to_the_layers_one_copy(tmp_path: Path) -> None:
    module = script_module()
    links = module.profile_links(MANIFEST_DATA)
    assert len(links) == 2 + 2 * 2 * 2
    assert all(link.is_symlink() and link.resolve() == target.resolve() for link, target in links)
    # Its twin: a copy in place of a link is a second copy, and the check names it.
    module.PROFILE_DATA = tmp_path
    copy = tmp_path / "face_landmark.in0.npy"
    copy.write_bytes((LAYER_FILES / "face_landmark.in0.npy").read_bytes())
    problems = module.verify_committed(MANIFEST_DATA)
    assert f"{copy} is not a link to {module._shown(LAYER_FILES / copy.name)}" in problems


@pytest.mark.parametrize(("name", "soc", "facts"), entries(), ids=lambda v: v if isinstance(v, str) else "")
def test_rknn_file_is_small_for_its_soc_and_holds_its_quantization(name: str, soc: str, facts: dict) -> None:
    data = (LAYER_FILES / facts["rknn"]).read_bytes()
    assert len(data) <= MAX_COMMITTED_BYTES and data[:4] == b"RKNN"
    # The toolkit's model description (JSON at the end of the file) names the target and version.
    description = json.loads(data[data.rindex(b'{"connection"') :].rstrip(b"\0").decode())
    assert description["target_platform"] == [soc] and description["version"] == "2.3.2"
    assert facts["toolkit_version"].startswith("2.3.2(compiler version: 2.3.2")
    for tensor in facts["inputs"] + facts["outputs"]:
        assert struct.pack("<iIf", tensor["zero_point"], 1, np.float32(tensor["scale"])) in data


@pytest.mark.parametrize(("name", "soc", "facts"), entries(), ids=lambda v: v if isinstance(v, str) else "")
def test_goldens_lie_on_their_outputs_int8_grid(name: str, soc: str, facts: dict) -> None:
    for tensor in facts["outputs"]:
        golden = np.load(PROFILE_DATA / tensor["golden"], allow_pickle=False)
        assert list(golden.shape) == tensor["dims"] and golden.dtype == np.float32
        raw = quantize(golden, tensor)
        back = (raw.astype(np.float64) - tensor["zero_point"]) * tensor["scale"]
        assert np.allclose(back, golden, rtol=0, atol=1e-4 * tensor["scale"] * 128)


def test_inputs_are_the_photo_the_other_tests_use() -> None:
    detector = np.load(PROFILE_DATA / "face_detection_short_range.in0.npy", allow_pickle=False)
    landmark = np.load(PROFILE_DATA / "face_landmark.in0.npy", allow_pickle=False)
    assert np.array_equal(detector, models.face_detection_input())
    assert np.array_equal(landmark, models.face_landmark_input())


def test_script_and_tests_take_the_same_models_from_the_same_wheel() -> None:
    module = script_module()
    assert module.WHEEL == models.WHEEL_REQUIREMENT
    assert {m.name: m.sha256 for m in module.MODELS} == {m.name: m.sha256 for m in models.MODELS}
    assert MANIFEST_DATA["source"]["models"] == {
        m.name: {"member": m.member, "sha256": m.sha256} for m in models.MODELS
    }


def test_recipe_installs_where_the_profiles_look() -> None:
    recipe = RECIPE.read_text()
    assert "${datadir}/npu-models/rknn/$soc/" in recipe and 'RKNN_MODEL_SOCS = "rk3588 rk3576"' in recipe
    assert "md5=87a30e5cfa12d1ab9ada4fb6f3feed4b" in recipe
    for soc in SOCS:
        from npu_accept.profile import load_profile

        profile = load_profile(f"{soc}-evb", PROFILES)
        assert [m.name for m in profile.models] == MODEL_NAMES
        for spec in profile.models:
            facts = MANIFEST_DATA["models"][spec.name]["socs"][soc]
            assert spec.path == f"/usr/share/npu-models/rknn/{facts['rknn']}" and spec.backend == "rknn"
            assert spec.reference == f"/usr/share/npu-models/{spec.name}.tflite"
            assert [g.relative_to(LAYER_FILES).as_posix() for g in spec.golden] == [
                t["golden"] for t in facts["outputs"]
            ]


# --- the goldens against TFLite on the CPU ---------------------------------------------------


@pytest.mark.parametrize("soc", SOCS)
def test_goldens_agree_with_tflite_on_the_cpu_within_the_profiles_thresholds(soc: str) -> None:
    from ai_edge_litert.interpreter import Interpreter

    from npu_accept import compare
    from npu_accept.profile import load_profile

    wheel = {m.name: m for m in models.MODELS}
    for spec in load_profile(f"{soc}-evb", PROFILES).models:
        interpreter = Interpreter(model_path=str(models.model_path(wheel[spec.name])))
        interpreter.allocate_tensors()
        interpreter.set_tensor(interpreter.get_input_details()[0]["index"], np.load(spec.inputs[0].path))
        interpreter.invoke()
        cpu = [interpreter.get_tensor(d["index"]) for d in interpreter.get_output_details()]
        for ref, golden in zip(cpu, spec.golden, strict=True):
            verdict = compare.compare(ref, np.load(golden), thresholds=spec.thresholds)
            assert verdict.passed, (spec.name, golden.name, verdict.sentence)


# --- npu-run's rknn backend on the stand-in librknnrt ----------------------------------------


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The stand-in runtime and a recordings directory for the RK3588 detector."""
    work = tmp_path_factory.mktemp("rknn-recorded")
    entry = MANIFEST_DATA["models"]["face_detection_short_range"]
    facts = entry["socs"]["rk3588"]
    model = LAYER_FILES / facts["rknn"]
    image = PROFILE_DATA / entry["input"]["file"]
    recordings = work / "recordings"
    recordings.mkdir()
    data = recording(facts, [np.load(image)])
    (recordings / f"{fnv64(model.read_bytes()):016x}.rec").write_bytes(data)
    return {
        "runtime": build_runtime(work),
        "recordings": recordings,
        "model": model,
        "image": image,
        "work": work,
    }


def npu_run(recorded: dict[str, Path], image: Path, out: str, model: Path | None = None):  # noqa: ANN201
    env = dict(
        os.environ,
        NPU_RUN_LIBRKNNRT=str(recorded["runtime"]),
        RKNN_TWIN_RECORDINGS=str(recorded["recordings"]),
    )
    args = ["--model", model or recorded["model"], "--input", image, "--output-dir", recorded["work"] / out]
    return run_tool("npu-run", *map(str, args), "--backend", "rknn", "--json", env=env)


def test_backend_feeds_the_float_photo_and_gets_the_raw_int8_outputs(recorded: dict[str, Path]) -> None:
    result = npu_run(recorded, recorded["image"], "ok")
    assert result.code == 0, result.stderr
    doc = result.json()
    facts = MANIFEST_DATA["models"]["face_detection_short_range"]["socs"]["rk3588"]
    assert doc["inputs"][0]["dtype"] == "float32" and doc["inputs"][0]["shape"] == [1, 128, 128, 3]
    for entry, tensor in zip(doc["outputs"], facts["outputs"], strict=True):
        got = np.load(recorded["work"] / "ok" / entry["file"])
        assert got.dtype == np.int8 and entry["zero_point"] == tensor["zero_point"]
        assert entry["scale"] == pytest.approx(tensor["scale"])
        golden = np.load(PROFILE_DATA / tensor["golden"])
        dequantized = (got.astype(np.float64) - entry["zero_point"]) * entry["scale"]
        assert np.allclose(dequantized, golden, atol=tensor["scale"] * 1e-3)


def test_an_input_the_model_was_not_recorded_with_fails_the_run(recorded: dict[str, Path]) -> None:
    as_pixels = recorded["work"] / "pixels.npy"
    photo = np.load(recorded["image"])
    np.save(as_pixels, np.round((photo + 1.0) * 127.5).astype(np.uint8))
    result = npu_run(recorded, as_pixels, "pixels")
    assert result.code == 1
    assert result.json()["errors"][0].startswith("rknn_run failed with -1 (RKNN_ERR_FAIL)")
    assert "no recorded outputs for this input" in result.stderr


def test_a_model_without_a_recording_is_rejected_as_invalid(recorded: dict[str, Path]) -> None:
    other = recorded["work"] / "other.rknn"
    other.write_bytes((LAYER_FILES / "rk3576" / "face_detection_short_range.rknn").read_bytes())
    result = npu_run(recorded, recorded["image"], "other", model=other)
    assert result.code == 1
    assert result.json()["errors"][0].startswith("rknn_init failed with -6 (RKNN_ERR_MODEL_INVALID)")
    assert "no recording" in result.stderr


# --- the suite on Rockchip twins ---------------------------------------------------------------

BOARDS = {
    "rk3588-healthy": ("rk3588", "golden"),
    "rk3576-healthy": ("rk3576", "golden"),
    "rk3588-degenerate": ("rk3588", "degenerate"),
    "rk3588-perturbed": ("rk3588", "perturbed"),
}


@pytest.fixture(scope="module")
def suite_runs(twin_factory, tmp_path_factory) -> dict:  # noqa: ANN001
    from twins.boards_rockchip import (
        HEALTHY_RK3576,
        HEALTHY_RK3588,
        MOBILENET_INPUT,
        MOBILENET_OUTPUT,
        rockchip_assets,
        rockchip_spec,
        twin_model,
    )
    from twins.boards_run import run_on_twin

    work = tmp_path_factory.mktemp("rknn-models-suite")
    assets = rockchip_assets(work / "assets")
    demo = twin_model([MOBILENET_INPUT], [MOBILENET_OUTPUT])
    runs = {}
    for name, (soc, fault) in BOARDS.items():
        board = HEALTHY_RK3588 if soc == "rk3588" else HEALTHY_RK3576
        twin = twin_factory(rockchip_spec(board, assets, demo, twin_files(soc, fault)))
        runs[name] = run_on_twin(twin, PROFILES / f"{soc}-evb.yaml", work / name)
    return runs


@pytest.mark.parametrize("name", ["rk3588-healthy", "rk3576-healthy"])
def test_healthy_twin_matches_the_goldens_and_tflite_on_the_cpu(suite_runs: dict, name: str) -> None:
    run = suite_runs[name]
    assert run.results()["outputs"].status == "pass", run.describe()
    message = run.message("outputs")
    for model in MODEL_NAMES:
        assert f"{model}: 2 output(s) match the CPU and golden reference" in message, message
    assert run.results()["runtime"].status == "pass", run.describe()


def test_degenerate_npu_outputs_fail_the_outputs_check(suite_runs: dict) -> None:
    run = suite_runs["rk3588-degenerate"]
    assert run.failed() >= {"outputs"}, run.describe()
    message = run.message("outputs")
    assert message.startswith("Output 0 of model face_detection_short_range on the NPU does not match")
    assert "degenerate" in message


def test_perturbed_npu_outputs_fail_the_outputs_check(suite_runs: dict) -> None:
    run = suite_runs["rk3588-perturbed"]
    assert "outputs" in run.failed(), run.describe()
    message = run.message("outputs")
    assert "does not match the CPU reference" in message and "below the threshold" in message, message
    assert "degenerate" not in message


# --- the script ----------------------------------------------------------------------------


def test_script_without_the_toolkit_says_how_to_install_it() -> None:
    if importlib.util.find_spec("rknn") is not None:
        pytest.skip("rknn-toolkit2 is installed in this interpreter")
    proc = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, check=False)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.strip().splitlines() == [
        "rknn-toolkit2 2.3.2 is not installed; install the extra: "
        "pip install '.[rknn]' (docs/rknn-models.md)."
    ]


def test_script_reads_the_tensor_table_the_manifest_records() -> None:
    module = script_module()
    for _name, _soc, facts in entries():
        outputs = [np.load(PROFILE_DATA / t["golden"]) for t in facts["outputs"]]
        found = module.rknn_facts(LAYER_FILES / facts["rknn"], outputs)
        outputs = [{k: v for k, v in t.items() if not k.startswith("golden")} for t in facts["outputs"]]
        assert found == {
            "toolkit_version": facts["toolkit_version"],
            "inputs": facts["inputs"],
            "outputs": outputs,
        }


def toolkit_python() -> str | None:
    explicit = os.environ.get("RKNN_TOOLKIT_PYTHON")
    if explicit:
        return explicit
    return sys.executable if importlib.util.find_spec("rknn") is not None else None


@pytest.mark.skipif(
    toolkit_python() is None,
    reason="rknn-toolkit2 2.3.2 is not installed: pip install '.[rknn]' in a virtualenv and set "
    "RKNN_TOOLKIT_PYTHON to its python (the committed models and goldens are checked above)",
)
def test_script_rebuilds_the_landmark_model_as_the_manifest_says(tmp_path: Path) -> None:
    proc = subprocess.run(
        [
            toolkit_python(),
            str(SCRIPT),
            "--model",
            "face_landmark",
            "--soc",
            "rk3588",
            "--out",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "every input, tensor and golden output matches the committed manifest" in proc.stdout
    facts = MANIFEST_DATA["models"]["face_landmark"]["socs"]["rk3588"]
    for tensor in facts["outputs"]:
        assert f"{tensor['golden_sha256']}  {tensor['golden']} (golden, simulator)" in proc.stdout


def test_manifest_is_what_the_script_writes() -> None:
    text = MANIFEST.read_text()
    assert text == json.dumps(json.loads(text), indent=1, sort_keys=True) + "\n"
    assert (
        MANIFEST_DATA["schema"] == "npu-rknn-models/1" and MANIFEST_DATA["toolkit"] == "rknn-toolkit2 2.3.2"
    )
    ast.parse(SCRIPT.read_text())


def test_backend_passes_a_4d_input_as_nhwc_when_the_model_reports_nchw(tmp_path: Path) -> None:
    from twins.boards_rockchip import MOBILENET_OUTPUT, TwinTensor, reference_outputs, twin_model

    nchw = TwinTensor("images", (1, 3, 224, 224), "uint8", fmt=0)
    model = tmp_path / "nchw.rknn"
    model.write_bytes(twin_model([nchw], [MOBILENET_OUTPUT]))
    runtime = build_runtime(tmp_path)
    env = dict(os.environ, NPU_RUN_LIBRKNNRT=str(runtime))
    pixels = np.random.default_rng(3).integers(0, 256, (1, 224, 224, 3), dtype=np.uint8)
    for name, array in (("nhwc", pixels), ("nchw", pixels.transpose(0, 3, 1, 2))):
        np.save(tmp_path / f"{name}.npy", array)
    args = ["--model", str(model), "--backend", "rknn", "--json", "--output-dir", str(tmp_path / "out")]
    result = run_tool("npu-run", *args, "--input", str(tmp_path / "nhwc.npy"), env=env)
    assert result.code == 0, result.stderr
    assert result.json()["inputs"][0]["shape"] == [1, 224, 224, 3]
    got = np.load(tmp_path / "out" / "out0.npy")
    assert np.array_equal(got, reference_outputs([pixels], [MOBILENET_OUTPUT])[0])
    wrong = run_tool("npu-run", *args, "--input", str(tmp_path / "nchw.npy"), env=env)
    text = wrong.stderr if wrong.code == 2 else " ".join(wrong.json()["errors"])
    assert "has shape [1, 3, 224, 224] but model input 'images' needs [1, 224, 224, 3]" in text


@pytest.mark.parametrize("name", ["rk3588-healthy", "rk3576-healthy"])
def test_healthy_twin_passes_checks_8_to_10_with_governors_pinned(suite_runs: dict, name: str) -> None:
    """Checks 8-10 on the real .rknn files: kernel log clean, repeated runs identical, the models'
    RKNN-Toolkit2 2.3.2 pairs with librknnrt 2.3.2; check 7 reports a run with the governors pinned
    and restored; the runtime's RKNN_LOG_LEVEL=4 log of each model is in the artifacts."""
    run = suite_runs[name]
    statuses = {check: run.results()[check].status for check in ("kernel_log", "determinism", "pairing")}
    assert statuses == dict.fromkeys(statuses, "pass"), run.describe()
    assert "(RKNN-Toolkit2 2.3.2)" in run.message("pairing") and "librknnrt 2.3.2" in run.message("pairing")
    assert "pinned to performance and restored after" in run.message("performance"), run.message(
        "performance"
    )
    assert len(list(run.artifacts.glob("*/*/rknn-log-level-4.txt"))) == len(MODEL_NAMES)
    # the NPU SRAM: configured, and really held by a run with RKNN_FLAG_ENABLE_SRAM (the twin's
    # runtime takes 512 KB, or all 480 KB of an RK3576)
    assert run.results()["memory"].status == "pass", run.describe()
    held = "480 KB" if name == "rk3576-healthy" else "512 KB"
    assert f"held {held} of it while running" in run.message("memory"), run.message("memory")
    if name == "rk3588-healthy":  # three NPU cores: core mask 0_1_2 against core 0, reported
        performance = run.message("performance")
        assert "multi-core:" in performance and "on cores 0_1_2" in performance, performance


@pytest.fixture(scope="module")
def rk3588_mode_runs(twin_factory, tmp_path_factory) -> dict:  # noqa: ANN001
    """RK3588 twins with the real models whose runtime leaves the SRAM unused, or whose NPU
    runs every core mask as fast as one core."""
    import dataclasses

    from twins.boards_rockchip import (
        HEALTHY_RK3588,
        MOBILENET_INPUT,
        MOBILENET_OUTPUT,
        rockchip_assets,
        rockchip_spec,
        twin_model,
    )
    from twins.boards_run import run_on_twin

    work = tmp_path_factory.mktemp("rknn-modes")
    assets = rockchip_assets(work / "assets")
    demo = twin_model([MOBILENET_INPUT], [MOBILENET_OUTPUT])
    boards = {
        "sram-unused": dataclasses.replace(HEALTHY_RK3588, name="rk3588-sram-unused", sram_unused=True),
        "one-core": dataclasses.replace(HEALTHY_RK3588, name="rk3588-one-core", one_core=True),
    }
    return {
        name: run_on_twin(
            twin_factory(rockchip_spec(board, assets, demo, twin_files("rk3588", "golden"))),
            PROFILES / "rk3588-evb.yaml",
            work / name,
        )
        for name, board in boards.items()
    }


def test_sram_configured_but_unused_fails_memory(rk3588_mode_runs: dict) -> None:
    run = rk3588_mode_runs["sram-unused"]
    assert "memory" in run.failed(), run.describe()
    assert "left it unused (/sys/kernel/debug/rknpu/mm showed 0 bytes used" in run.message("memory")


def test_multicore_speedup_is_reported(suite_runs: dict, rk3588_mode_runs: dict) -> None:
    import re

    def speedups(run) -> list[float]:  # noqa: ANN001
        part = run.message("performance").split("multi-core:")[1]
        return [float(x) for x in re.findall(r"\((\d+\.\d+)x\)", part)]

    three = speedups(suite_runs["rk3588-healthy"])
    one = speedups(rk3588_mode_runs["one-core"])
    assert len(three) == len(one) == len(MODEL_NAMES)
    assert min(three) > 1.5 and max(one) < 1.5, (three, one)

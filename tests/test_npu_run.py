# SPDX-License-Identifier: MIT
"""npu-run for real: ai-edge-litert on MediaPipe's face models, a real photograph, XNNPACK node
counting, and the twin's Neutron delegate (a real external delegate built from C) on a model
whose output RESHAPEs were converted to the custom op NeutronGraph."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from ai_edge_litert import schema_py_generated as schema
from models import FACE_DETECTION, FACE_LANDMARK, face_detection_input, face_landmark_input, model_path
from npu_tools import TOOLS_DIR, assert_one_sentence_usage_error, run_tool, validate

from npu_accept.compare import compare
from npu_accept.sim.delegate.build import build_delegate
from npu_accept.sim.delegate.convert import convert

FD_OPS = 164  # operators of face_detection_short_range.tflite (mediapipe 0.10.14)


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("npu-run")


@pytest.fixture(scope="module")
def fd_model() -> Path:
    return model_path(FACE_DETECTION)


@pytest.fixture(scope="module")
def fd_input(work: Path) -> Path:
    path = work / "fd_in.npy"
    np.save(path, face_detection_input())
    return path


@pytest.fixture(scope="module")
def delegate_lib(work: Path) -> Path:
    return build_delegate(work / "lib")


@pytest.fixture(scope="module")
def neutron_model(work: Path, fd_model: Path) -> tuple[Path, list[int]]:
    target = work / "face_detection_neutron.tflite"
    converted = convert(fd_model, target)
    return target, converted


@pytest.fixture(scope="module")
def cpu_run(work: Path, fd_model: Path, fd_input: Path) -> dict:
    run = run_tool(
        "npu-run",
        "--model",
        str(fd_model),
        "--input",
        str(fd_input),
        "--output-dir",
        str(work / "cpu"),
        "--backend",
        "tflite-cpu",
        "--runs",
        "3",
        "--warmup",
        "1",
        "--json",
    )
    assert run.code == 0, run.stderr
    return run.json()


def _outputs(doc: dict) -> list[np.ndarray]:
    return [np.load(o["file"]) for o in doc["outputs"]]


def _delegate_run(
    work: Path, model: Path, fd_input: Path, lib: Path, conf: str | None, tag: str, *extra: str
):
    config = work / f"{tag}.conf"
    if conf is not None:
        config.write_text(conf)
    return run_tool(
        "npu-run",
        "--model",
        str(model),
        "--input",
        str(fd_input),
        "--output-dir",
        str(work / tag),
        "--backend",
        "tflite-delegate",
        "--delegate",
        str(lib),
        "--delegate-option",
        f"config={config}",
        "--json",
        *extra,
    )


def test_cpu_run_on_real_model_and_photo(cpu_run: dict) -> None:
    validate(cpu_run, "npu-run")
    assert cpu_run["bindings"].startswith(("ai_edge_litert ", "tflite_runtime "))
    assert cpu_run["model"]["ops_total"] == FD_OPS and cpu_run["model"]["custom_ops"] == []
    assert [o["shape"] for o in cpu_run["outputs"]] == [[1, 896, 16], [1, 896, 1]]
    assert len(cpu_run["latency_ms"]) == 3 and all(t > 0 for t in cpu_run["latency_ms"])
    assert cpu_run["errors"] == [] and cpu_run["delegate"] is None
    scores = 1.0 / (1.0 + np.exp(-np.clip(_outputs(cpu_run)[1].ravel(), -50, 50)))
    assert scores.max() > 0.8, "the face detector must find the astronaut's face"


def test_xnnpack_node_counting(cpu_run: dict) -> None:
    nodes = cpu_run["nodes"]
    assert nodes["source"] == "execution-plan"
    assert nodes["total"] == FD_OPS
    assert nodes["xnnpack_applied"] is True
    assert 0 < nodes["xnnpack_nodes"] <= FD_OPS and nodes["xnnpack_partitions"] >= 1
    assert nodes["delegated"] == 0 and nodes["partitions"] == 0  # no external delegate on tflite-cpu
    assert "XNNPACK" in cpu_run["log"]["stderr_tail"]


def test_no_xnnpack_runs_reference_kernels_and_agrees(
    work: Path, fd_model: Path, fd_input: Path, cpu_run: dict
) -> None:
    run = run_tool(
        "npu-run",
        "--model",
        str(fd_model),
        "--input",
        str(fd_input),
        "--output-dir",
        str(work / "cpu-plain"),
        "--backend",
        "tflite-cpu",
        "--no-xnnpack",
        "--json",
    )
    assert run.code == 0, run.stderr
    doc = run.json()
    validate(doc, "npu-run")
    assert doc["nodes"]["xnnpack_applied"] is False and doc["nodes"]["xnnpack_nodes"] == 0
    for ref, out in zip(_outputs(cpu_run), _outputs(doc), strict=True):
        assert compare(ref, out).passed


def test_face_landmark_runs(work: Path) -> None:
    path = work / "lm_in.npy"
    np.save(path, face_landmark_input())
    run = run_tool(
        "npu-run",
        "--model",
        str(model_path(FACE_LANDMARK)),
        "--input",
        str(path),
        "--output-dir",
        str(work / "lm"),
        "--backend",
        "tflite-cpu",
        "--json",
    )
    assert run.code == 0, run.stderr
    doc = run.json()
    validate(doc, "npu-run")
    landmarks, face = _outputs(doc)
    assert landmarks.shape == (1, 1, 1, 1404) and float(face.ravel()[0]) > 0  # a face is present


@pytest.mark.parametrize("model", [FACE_DETECTION, FACE_LANDMARK], ids=lambda m: m.name)
def test_flatbuffer_reader_agrees_with_schema(model) -> None:
    from npu_target.tflite_model import read_model

    path = model_path(model)
    parsed = schema.ModelT.InitFromPackedBuf(bytearray(path.read_bytes()), 0)
    summary = read_model(path)
    assert summary.ops_total == len(parsed.subgraphs[0].operators)
    assert summary.subgraphs == len(parsed.subgraphs)
    codes = {max(c.builtinCode, c.deprecatedBuiltinCode) for c in parsed.operatorCodes}
    assert set(summary.builtin_codes) == codes


def test_flatbuffer_reader_finds_custom_op(neutron_model) -> None:
    from npu_target.tflite_model import read_model

    path, converted = neutron_model
    summary = read_model(path)
    assert summary.custom_ops == ["NeutronGraph"]
    assert summary.ops_total == FD_OPS and len(converted) == 4


def test_twin_delegate_takes_neutron_graph_and_matches_cpu(
    work: Path, neutron_model, fd_input: Path, delegate_lib: Path, cpu_run: dict
) -> None:
    model, converted = neutron_model
    run = _delegate_run(work, model, fd_input, delegate_lib, "mode = ok\n", "npu-ok")
    assert run.code == 0, run.stderr
    doc = run.json()
    validate(doc, "npu-run")
    assert doc["model"]["custom_ops"] == ["NeutronGraph"]
    assert doc["delegate"]["loaded"] is True and doc["delegate"]["version"] == "twin-1.0.0"
    nodes = doc["nodes"]
    assert nodes["delegated"] == len(converted) and nodes["partitions"] >= 1 and nodes["total"] == FD_OPS
    assert doc["log"]["delegate_lines"] == [
        f"INFO: NeutronDelegate delegate: {len(converted)} nodes delegated out of {FD_OPS} nodes with "
        f"{nodes['partitions']} partitions."
    ]
    for ref, out in zip(_outputs(cpu_run), _outputs(doc), strict=True):
        verdict = compare(ref, out)
        assert verdict.passed, verdict.sentence


def test_converted_model_cannot_run_on_cpu(work: Path, neutron_model, fd_input: Path) -> None:
    model, _ = neutron_model
    run = run_tool(
        "npu-run",
        "--model",
        str(model),
        "--input",
        str(fd_input),
        "--output-dir",
        str(work / "cpu-conv"),
        "--backend",
        "tflite-cpu",
        "--json",
    )
    assert run.code == 1
    doc = run.json()
    validate(doc, "npu-run")
    assert any("unresolved custom op: NeutronGraph" in e for e in doc["errors"]), doc["errors"]
    assert doc["outputs"] == []


def test_delegate_claiming_nothing(work: Path, neutron_model, fd_input: Path, delegate_lib: Path) -> None:
    model, _ = neutron_model
    run = _delegate_run(work, model, fd_input, delegate_lib, "mode = claim-none\n", "npu-none")
    assert run.code == 1
    doc = run.json()
    validate(doc, "npu-run")
    assert doc["nodes"]["delegated"] == 0 and doc["nodes"]["partitions"] == 0
    assert "0 nodes delegated out of" in doc["log"]["delegate_lines"][0]
    assert any("NeutronGraph" in e for e in doc["errors"])


def test_delegate_invoke_failure(work: Path, neutron_model, fd_input: Path, delegate_lib: Path) -> None:
    model, converted = neutron_model
    run = _delegate_run(work, model, fd_input, delegate_lib, "mode = fail-invoke\n", "npu-fail")
    assert run.code == 1
    doc = run.json()
    validate(doc, "npu-run")
    assert doc["nodes"]["delegated"] == len(converted)
    assert any(e.startswith("invoke failed") and "NPU job failed" in e for e in doc["errors"]), doc["errors"]


def test_delegate_constant_outputs_are_degenerate(
    work: Path, neutron_model, fd_input: Path, delegate_lib: Path, cpu_run: dict
) -> None:
    model, _ = neutron_model
    run = _delegate_run(work, model, fd_input, delegate_lib, "mode = constant\n", "npu-const")
    assert run.code == 0, run.stderr  # the run "works", as in the i.MX95 A0 field report
    verdicts = [compare(r, o) for r, o in zip(_outputs(cpu_run), _outputs(run.json()), strict=True)]
    assert all(not v.passed and v.degenerate for v in verdicts), [v.sentence for v in verdicts]


def test_delegate_slightly_off_outputs_pass(
    work: Path, neutron_model, fd_input: Path, delegate_lib: Path, cpu_run: dict
) -> None:
    model, _ = neutron_model
    run = _delegate_run(work, model, fd_input, delegate_lib, "mode = offset:0.001\n", "npu-off")
    assert run.code == 0, run.stderr
    outs = _outputs(run.json())
    for ref, out in zip(_outputs(cpu_run), outs, strict=True):
        assert not np.array_equal(ref, out)
        assert compare(ref, out).passed


def test_delegate_log_contradicting_the_plan_is_reported(
    work: Path, neutron_model, fd_input: Path, delegate_lib: Path
) -> None:
    model, _ = neutron_model
    run = _delegate_run(work, model, fd_input, delegate_lib, "report = 40\n", "npu-lie")
    assert run.code == 1
    doc = run.json()
    assert any("cannot be trusted" in e for e in doc["errors"]), doc["errors"]


def test_missing_delegate_library(work: Path, neutron_model, fd_input: Path) -> None:
    model, _ = neutron_model
    run = _delegate_run(work, model, fd_input, work / "nowhere" / "libneutron_delegate.so", None, "npu-miss")
    assert run.code == 1
    doc = run.json()
    validate(doc, "npu-run")
    assert doc["delegate"]["loaded"] is False
    assert "does not exist" in doc["errors"][0]


def test_bad_delegate_config_is_one_sentence(
    work: Path, neutron_model, fd_input: Path, delegate_lib: Path
) -> None:
    model, _ = neutron_model
    run = _delegate_run(work, model, fd_input, delegate_lib, "mode = sideways\n", "npu-badconf")
    assert run.code == 1
    doc = run.json()
    assert doc["delegate"]["loaded"] is False
    assert "unknown mode 'sideways'" in doc["errors"][0]


def test_launcher_works_from_an_uploaded_copy(tmp_path: Path, fd_model: Path, fd_input: Path) -> None:
    copy = tmp_path / "upload"
    shutil.copytree(TOOLS_DIR, copy, ignore=shutil.ignore_patterns("__pycache__"))
    run = run_tool(
        "npu-run",
        "--model",
        str(fd_model),
        "--input",
        str(fd_input),
        "--output-dir",
        str(tmp_path / "o"),
        "--backend",
        "tflite-cpu",
        "--json",
        tools_dir=copy,
    )
    assert run.code == 0, run.stderr
    assert run.json()["schema"] == "npu-run/1"


def test_missing_backend_module_is_one_sentence(tmp_path: Path, fd_model: Path, fd_input: Path) -> None:
    copy = tmp_path / "upload"
    shutil.copytree(TOOLS_DIR, copy, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "npu_target" / "backends" / "rknn.py").unlink(missing_ok=True)
    run = run_tool(
        "npu-run",
        "--model",
        str(fd_model),
        "--input",
        str(fd_input),
        "--output-dir",
        str(tmp_path / "o"),
        "--backend",
        "rknn",
        "--json",
        tools_dir=copy,
    )
    assert_one_sentence_usage_error(run, "rknn", "rknn.py")


@pytest.mark.parametrize(
    "case",
    [
        "missing-model",
        "not-tflite",
        "wrong-shape",
        "wrong-count",
        "bad-option",
        "no-delegate",
        "unknown-backend",
        "no-input",
        "bad-npy",
        "zero-runs",
    ],
)
def test_bad_usage_is_one_sentence_exit_2(case: str, tmp_path: Path, fd_model: Path, fd_input: Path) -> None:
    out = str(tmp_path / "o")
    base = ["--output-dir", out, "--json"]
    junk = tmp_path / "junk.tflite"
    junk.write_bytes(b"this is not a model at all")
    bad_npy = tmp_path / "bad.npy"
    bad_npy.write_text("not numpy")
    wrong = tmp_path / "wrong.npy"
    np.save(wrong, np.zeros((1, 64, 64, 3), np.float32))
    model, inp = ["--model", str(fd_model)], ["--input", str(fd_input)]
    args, words = {
        "missing-model": (
            ["--model", str(tmp_path / "none.tflite"), *inp, "--backend", "tflite-cpu"],
            ["none.tflite", "does not exist"],
        ),
        "not-tflite": (["--model", str(junk), *inp, "--backend", "tflite-cpu"], ["junk.tflite", "TFLite"]),
        "wrong-shape": ([*model, "--input", str(wrong), "--backend", "tflite-cpu"], ["wrong.npy", "128"]),
        "wrong-count": ([*model, *inp, *inp, "--backend", "tflite-cpu"], ["1 input(s)", "2"]),
        "bad-option": (
            [
                *model,
                *inp,
                "--backend",
                "tflite-delegate",
                "--delegate",
                "/x.so",
                "--delegate-option",
                "novalue",
            ],
            ["novalue", "KEY=VALUE"],
        ),
        "no-delegate": ([*model, *inp, "--backend", "tflite-delegate"], ["--delegate"]),
        "unknown-backend": ([*model, *inp, "--backend", "gpu"], ["gpu"]),
        "no-input": ([*model, "--backend", "tflite-cpu"], ["--input"]),
        "bad-npy": ([*model, "--input", str(bad_npy), "--backend", "tflite-cpu"], ["bad.npy", ".npy"]),
        "zero-runs": ([*model, *inp, "--backend", "tflite-cpu", "--runs", "0"], ["--runs"]),
    }[case]
    assert_one_sentence_usage_error(run_tool("npu-run", *args, *base), *words)


def test_board_code_is_python39_syntax() -> None:
    """The board may have Python 3.9 (design: Python >= 3.9 on the board)."""
    import ast

    sources = [*TOOLS_DIR.rglob("*.py"), TOOLS_DIR / "npu-run", TOOLS_DIR / "npu-info"]
    assert len(sources) > 10
    for source in sources:
        ast.parse(source.read_text(), filename=str(source), feature_version=(3, 9))


def test_crashing_backend_is_one_sentence(tmp_path: Path, fd_model: Path, fd_input: Path) -> None:
    copy = tmp_path / "upload"
    shutil.copytree(TOOLS_DIR, copy, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "npu_target" / "backends" / "cvi.py").write_text("def run(request):\n    return 1 / 0\n")
    run = run_tool(
        "npu-run",
        "--model",
        str(fd_model),
        "--input",
        str(fd_input),
        "--output-dir",
        str(tmp_path / "o"),
        "--backend",
        "cvi",
        "--json",
        tools_dir=copy,
    )
    assert run.code == 1 and run.stdout == "" and "Traceback" not in run.stderr
    assert run.stderr.strip().splitlines() == [
        "npu-run: the run failed unexpectedly (ZeroDivisionError: division by zero); "
        "report this with the command line."
    ]


def test_node_counts_add_up_across_delegates(
    work: Path, fd_model: Path, fd_input: Path, delegate_lib: Path, cpu_run: dict
) -> None:
    """The twin claims every RESHAPE of the unconverted model, XNNPACK the rest in its own partitions:
    the two counts, each walked from its DELEGATE nodes, must add up to the whole graph."""
    parsed = schema.ModelT.InitFromPackedBuf(bytearray(fd_model.read_bytes()), 0)
    codes = [max(c.builtinCode, c.deprecatedBuiltinCode) for c in parsed.operatorCodes]
    reshapes = sum(
        codes[op.opcodeIndex] == schema.BuiltinOperator.RESHAPE for op in parsed.subgraphs[0].operators
    )
    run = _delegate_run(work, fd_model, fd_input, delegate_lib, "claim = reshape\n", "npu-reshape")
    assert run.code == 0, run.stderr
    doc = run.json()
    nodes = doc["nodes"]
    assert reshapes >= 4 and nodes["delegated"] == reshapes
    (line,) = doc["log"]["delegate_lines"]
    assert line.endswith(
        f"{reshapes} nodes delegated out of {FD_OPS} nodes with {nodes['partitions']} partitions."
    )
    assert nodes["partitions"] >= 1 and nodes["xnnpack_partitions"] >= 2
    assert nodes["delegated"] + nodes["xnnpack_nodes"] == FD_OPS
    for ref, out in zip(_outputs(cpu_run), _outputs(doc), strict=True):
        assert compare(ref, out).passed

# SPDX-License-Identifier: MIT
"""npu-run's rknn backend and npu-info's RKNPU probe, against a stand-in librknnrt built from C.

The stand-in (tests/twins/boards_rockchip.py) exports the librknnrt C API with rknn_api.h's
structure layout, so these tests exercise the real ctypes calls of npu_target/backends/rknn.py;
its outputs are recomputed here with numpy. The probe tests read twin board trees (npu-info
--root) with the faults the suite must catch: SRAM missing, server down, version mismatch, old
driver.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
from npu_tools import TOOLS_DIR, assert_one_sentence_usage_error, run_tool
from twins.boards_rockchip import (
    MOBILENET_INPUT,
    MOBILENET_OUTPUT,
    TwinTensor,
    build_runtime,
    build_server,
    reference_outputs,
    twin_model,
)

from npu_accept.paths import packaged_profiles_dir


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("rknn")


@pytest.fixture(scope="module")
def runtime(work: Path) -> Path:
    return build_runtime(work)


@pytest.fixture(scope="module")
def model(work: Path) -> Path:
    path = work / "mobilenet_v1.rknn"
    path.write_bytes(twin_model([MOBILENET_INPUT], [MOBILENET_OUTPUT]))
    return path


@pytest.fixture(scope="module")
def image(work: Path) -> tuple[Path, np.ndarray]:
    array = np.random.default_rng(7).integers(0, 256, MOBILENET_INPUT.dims, dtype=np.uint8)
    path = work / "in0.npy"
    np.save(path, array)
    return path, array


def npu_run(runtime: Path, *args: str | Path):  # noqa: ANN201 (ToolRun)
    env = dict(os.environ, NPU_RUN_LIBRKNNRT=str(runtime))
    return run_tool("npu-run", *map(str, args), env=env)


def test_rknn_backend_runs_the_model_and_returns_raw_outputs(
    runtime: Path, model: Path, image, work: Path
) -> None:
    path, array = image
    out = work / "out"
    result = npu_run(
        runtime,
        "--model",
        model,
        "--input",
        path,
        "--output-dir",
        out,
        "--backend",
        "rknn",
        "--runs",
        "3",
        "--warmup",
        "1",
        "--json",
    )
    assert result.code == 0, result.stderr
    doc = result.json()
    assert doc["backend"] == "rknn" and doc["bindings"] == "librknnrt 2.3.2 (twin)"
    assert doc["errors"] == [] and len(doc["latency_ms"]) == 3
    assert doc["inputs"][0]["shape"] == [1, 224, 224, 3] and doc["inputs"][0]["dtype"] == "uint8"
    output = doc["outputs"][0]
    assert output["name"] == MOBILENET_OUTPUT.name and output["dtype"] == "int8"
    assert output["shape"] == [1, 1001]
    assert output["zero_point"] == -128 and output["scale"] == pytest.approx(0.00390625)
    got = np.load(out / output["file"])
    assert np.array_equal(got, reference_outputs([array], [MOBILENET_OUTPUT])[0])


def test_two_outputs_come_back_in_order(runtime: Path, image, work: Path) -> None:
    path, array = image
    outputs = [TwinTensor("boxes", (1, 4, 8), "uint8", fmt=0), TwinTensor("scores", (1, 8), "int8", fmt=0)]
    two = work / "two.rknn"
    two.write_bytes(twin_model([MOBILENET_INPUT], outputs))
    result = npu_run(
        runtime, "--model", two, "--input", path, "--output-dir", work / "two", "--backend", "rknn", "--json"
    )
    assert result.code == 0, result.stderr
    want = reference_outputs([array], outputs)
    for entry, expected in zip(result.json()["outputs"], want, strict=True):
        assert np.array_equal(np.load(work / "two" / entry["file"]), expected)


def test_model_the_runtime_rejects_is_a_failed_run(runtime: Path, image, work: Path) -> None:
    bad = work / "bad.rknn"
    bad.write_bytes(b"not a model")
    result = npu_run(
        runtime,
        "--model",
        bad,
        "--input",
        image[0],
        "--output-dir",
        work / "bad",
        "--backend",
        "rknn",
        "--json",
    )
    assert result.code == 1
    assert result.json()["errors"] == [
        "rknn_init failed with -6 (RKNN_ERR_MODEL_INVALID); see the librknnrt log above and check that "
        "the model was converted for this SoC and the driver is loaded."
    ]


def test_input_of_the_wrong_shape_is_a_usage_error(runtime: Path, model: Path, work: Path) -> None:
    wrong = work / "wrong.npy"
    np.save(wrong, np.zeros((1, 3, 224, 224), dtype=np.uint8))
    result = npu_run(
        runtime, "--model", model, "--input", wrong, "--output-dir", work / "w", "--backend", "rknn", "--json"
    )
    assert result.code == 1 or result.code == 2
    text = result.stderr if result.code == 2 else " ".join(result.json()["errors"])
    assert "has shape [1, 3, 224, 224] but model input 'input' needs [1, 224, 224, 3]" in text


def test_missing_runtime_is_one_sentence(model: Path, image, work: Path) -> None:
    result = npu_run(
        work / "nowhere" / "librknnrt.so",
        "--model",
        model,
        "--input",
        image[0],
        "--output-dir",
        work / "m",
        "--backend",
        "rknn",
        "--json",
    )
    assert_one_sentence_usage_error(result, "cannot load the RKNN runtime", "install librknnrt")


def test_unknown_rknn_option_is_one_sentence(runtime: Path, model: Path, image, work: Path) -> None:
    result = npu_run(
        runtime,
        "--model",
        model,
        "--input",
        image[0],
        "--output-dir",
        work / "o",
        "--backend",
        "rknn",
        "--delegate-option",
        "turbo=1",
        "--json",
    )
    assert_one_sentence_usage_error(result, "unknown rknn option(s) turbo")


def test_sram_option_is_accepted(runtime: Path, model: Path, image, work: Path) -> None:
    result = npu_run(
        runtime,
        "--model",
        model,
        "--input",
        image[0],
        "--output-dir",
        work / "s",
        "--backend",
        "rknn",
        "--delegate-option",
        "sram=1",
        "--json",
    )
    assert result.code == 0, result.stderr


# --- npu-info's RKNPU probe on board trees with faults ----------------------------------------


def board_tree(
    root: Path, runtime: Path, server: Path, *, driver: str = "0.9.8", sram: int | None = 0xEF000
) -> Path:
    from twins.boards_rockchip import mm_bitmap

    files = {
        "sys/kernel/debug/rknpu/version": f"RKNPU driver: v{driver}\n",
        "sys/kernel/debug/rknpu/load": "NPU load:  Core0:  0%, Core1:  0%, Core2:  0%,\n",
        "sys/class/drm/renderD129/device/of_node/compatible": "rockchip,rk3588-rknpu\0",
    }
    if sram is not None:
        files["sys/kernel/debug/rknpu/mm"] = mm_bitmap(sram)
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / "usr/lib").mkdir(parents=True, exist_ok=True)
    (root / "usr/bin").mkdir(parents=True, exist_ok=True)
    (root / "usr/lib/librknnrt.so").write_bytes(runtime.read_bytes())
    (root / "usr/bin/rknn_server").write_bytes(server.read_bytes())
    return root


def probe(root: Path):  # noqa: ANN201 (FamilyFacts)
    import sys

    if str(TOOLS_DIR) not in sys.path:
        sys.path.insert(0, str(TOOLS_DIR))
    from npu_target.probes import rknpu
    from npu_target.probes.common import ProbeContext

    # A tree has no kernel log of its own; the host's is not the board's (and needs root).
    ctx = ProbeContext(root=root, _dmesg_cache=[])
    assert rknpu.detect(ctx)
    return rknpu.probe(ctx)


@pytest.fixture(scope="module")
def server(work: Path) -> Path:
    return build_server(work)


def test_healthy_tree_reports_driver_sram_runtime_and_server(
    tmp_path: Path, runtime: Path, server: Path
) -> None:
    facts = probe(board_tree(tmp_path, runtime, server))
    assert facts.driver["version"] == "0.9.8"
    assert facts.driver["version_source"] == "/sys/kernel/debug/rknpu/version"
    assert facts.driver["devices"] == ["/dev/dri/renderD129"]
    assert facts.memory["sram"]["present"] and facts.memory["sram"]["size"] == 0xEF000
    assert facts.runtime["version"] == "2.3.2" and facts.daemon["version"] == "2.3.2"
    assert facts.load.startswith("NPU load:")
    # A tree has no processes: the only complaint is the server that is not running.
    assert [e for e in facts.errors if "rknn_server is not running" not in e] == []


def test_missing_sram_is_reported(tmp_path: Path, runtime: Path, server: Path) -> None:
    facts = probe(board_tree(tmp_path, runtime, server, sram=None))
    assert facts.memory["sram"]["present"] is False
    assert any("the RKNPU has no SRAM" in e for e in facts.errors)


def test_server_and_runtime_of_different_releases_are_reported(
    tmp_path: Path, work: Path, server: Path
) -> None:
    old = build_runtime(work, "2.3.0")
    facts = probe(board_tree(tmp_path, old, server))
    assert any("rknn_server 2.3.2 and librknnrt 2.3.0 differ" in e for e in facts.errors)


def test_old_driver_version_is_what_the_probe_reports(tmp_path: Path, runtime: Path, server: Path) -> None:
    facts = probe(board_tree(tmp_path, runtime, server, driver="0.8.2"))
    assert facts.driver["version"] == "0.8.2"


# --- check 6 for the Rockchip families, on npu-info facts --------------------------------------


def sram_verdict(profile_name: str, sram: dict | None):  # noqa: ANN201 (CheckResult)
    from npu_accept.checks.registry import run_check
    from npu_accept.facts import BoardFacts
    from npu_accept.profile import load_profile

    profile = load_profile(profile_name, packaged_profiles_dir())
    facts = BoardFacts(target="twin", info={"memory": {"sram": sram, "pools": [], "ion": None}})
    return run_check("memory", facts, profile)


@pytest.mark.parametrize(("profile", "size"), [("rk3588-evb", 0xEF000), ("rk3576-evb", 0x78000)])
def test_sram_of_the_fragment_passes(profile: str, size: int) -> None:
    verdict = sram_verdict(
        profile,
        {"present": True, "start": 0xFF001000, "end": 0xFF001000 + size, "size": size, "source": "dmesg"},
    )
    assert verdict.status == "pass", verdict.message


def test_missing_sram_fails_with_the_fix() -> None:
    verdict = sram_verdict("rk3588-evb", {"present": False, "size": None})
    assert verdict.status == "fail" and verdict.cause == "sram-missing"
    assert "CONFIG_ROCKCHIP_RKNPU_SRAM" in verdict.message


def test_sram_of_another_size_fails() -> None:
    verdict = sram_verdict("rk3576-evb", {"present": True, "size": 0x40000, "source": "dmesg"})
    assert verdict.status == "fail" and verdict.cause == "sram-size"
    assert "0x40000 bytes but the profile expects 0x78000" in verdict.message


def test_rocket_has_no_memory_to_check() -> None:
    assert sram_verdict("rock-5b", None).status == "skip"


# --- check 3 for RKNPU: rknn_server restarted by its supervisor, on recorded probes -----------

RK_INFO = {
    "runtime": {"name": "librknnrt", "path": "/usr/lib/librknnrt.so", "version": "2.3.2"},
    "daemon": {
        "name": "rknn_server",
        "path": "/usr/bin/rknn_server",
        "version": "2.3.2",
        "running": True,
        "pids": [41],
    },
    "manifest": {"runtime": {"version": "2.3.2"}},
}


def runtime_verdict(probe: dict | None, *, restart_check: bool = True, info: dict | None = None):  # noqa: ANN201
    import dataclasses

    from npu_accept.checks.registry import run_check
    from npu_accept.facts import BoardFacts
    from npu_accept.profile import load_profile

    profile = load_profile("rk3588-evb", packaged_profiles_dir())
    if not restart_check:
        profile = dataclasses.replace(profile, daemon={**(profile.daemon or {}), "restart_check": False})
    facts = BoardFacts(
        target="twin", info=info or RK_INFO, extra={} if probe is None else {"daemon_restart": probe}
    )
    return run_check("runtime", facts, profile)


def test_shipped_rockchip_profiles_ask_for_the_restart_check() -> None:
    from npu_accept.profile import load_profile

    for name in ("rk3588-evb", "rk3576-evb"):
        profile = load_profile(name, packaged_profiles_dir())
        assert (profile.daemon or {}).get("restart_check") is True


def test_daemon_restarted_by_its_supervisor_passes() -> None:
    verdict = runtime_verdict(
        {
            "name": "rknn_server",
            "restarted": True,
            "old_pids": [41],
            "new_pids": [57],
            "waited_s": 0.4,
            "timeout_s": 10.0,
            "error": None,
        }
    )
    assert verdict.status == "pass", verdict.message
    assert "rknn_server (PID 41) was killed and its supervisor restarted it as PID 57" in verdict.message


def test_daemon_not_restarted_fails_with_the_fix() -> None:
    verdict = runtime_verdict(
        {
            "name": "rknn_server",
            "restarted": False,
            "old_pids": [41],
            "new_pids": [],
            "waited_s": 10.1,
            "timeout_s": 10.0,
            "error": None,
        }
    )
    assert verdict.status == "fail" and verdict.cause == "daemon-not-supervised"
    assert verdict.message == (
        "rknn_server was killed and not restarted within 10 s: enable "
        "rknn-server.service (Restart=on-failure) or its init script."
    )


def test_unprobed_daemon_fails_and_unrequested_probe_is_not_needed() -> None:
    assert runtime_verdict(None).cause == "daemon-restart-unknown"
    assert runtime_verdict(None, restart_check=False).status == "pass"


def test_probe_that_could_not_kill_fails_naming_why() -> None:
    verdict = runtime_verdict(
        {
            "name": "rknn_server",
            "restarted": False,
            "old_pids": [41],
            "new_pids": [],
            "waited_s": 0.0,
            "timeout_s": 10.0,
            "error": "kill -9 41 failed with status 1 (Operation not permitted)",
        }
    )
    assert verdict.status == "fail" and "Operation not permitted" in verdict.message


def test_dead_daemon_fails_as_not_running_before_any_restart_probe() -> None:
    info = {**RK_INFO, "daemon": {**RK_INFO["daemon"], "running": False, "pids": []}}
    verdict = runtime_verdict(None, info=info)
    assert verdict.cause == "daemon-dead"


def test_restart_check_must_be_a_boolean(tmp_path: Path) -> None:
    import yaml

    from npu_accept.profile import ProfileError, load_profile

    profiles = packaged_profiles_dir()
    data = yaml.safe_load((profiles / "rk3588-evb.yaml").read_text())
    data["daemon"]["restart_check"] = "yes"
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(data))
    with pytest.raises(ProfileError, match="restart_check"):
        load_profile(str(bad), profiles)


# --- the suite, as a user runs it, against RKNPU board twins ----------------------------------

# What the vendor profiles check that a twin can present for real: the driver and its version,
# the SoC, the runtime and rknn_server, the NPU SRAM, the kernel log. (Outputs, determinism and
# performance need the profile's .rknn models, which tests/test_rknn_models.py puts on its twins.)
TWIN_CHECKS = ("driver", "silicon", "runtime", "memory", "kernel_log")


@pytest.fixture(scope="module")
def suite_runs(twin_factory, tmp_path_factory) -> dict:  # noqa: ANN001
    from twins.boards_rockchip import FAULTS, HEALTHY_RK3576, HEALTHY_RK3588, rockchip_assets, rockchip_spec
    from twins.boards_run import run_on_twin

    work = tmp_path_factory.mktemp("rknpu-suite")
    assets = rockchip_assets(work / "assets")
    model = twin_model([MOBILENET_INPUT], [MOBILENET_OUTPUT])
    profiles = packaged_profiles_dir()
    boards = {
        "healthy": (HEALTHY_RK3588, "rk3588-evb"),
        "rk3576": (HEALTHY_RK3576, "rk3576-evb"),
        **{name: (board, "rk3588-evb") for name, (board, _, _) in FAULTS.items()},
    }
    runs = {}
    for name, (board, profile) in boards.items():
        twin = twin_factory(rockchip_spec(board, assets, model))
        runs[name] = run_on_twin(twin, profiles / f"{profile}.yaml", work / name)
    return runs


@pytest.mark.parametrize("name", ["healthy", "rk3576"])
def test_healthy_twin_passes_driver_soc_runtime_and_sram(suite_runs: dict, name: str) -> None:
    run = suite_runs[name]
    results = run.results()
    assert {check: results[check].status for check in TWIN_CHECKS} == dict.fromkeys(TWIN_CHECKS, "pass"), (
        run.describe()
    )
    assert "KB of SRAM" in run.message("memory")
    runtime = run.message("runtime")
    assert "was killed and its supervisor restarted it as PID" in runtime, runtime
    probe = json.loads(next(run.artifacts.glob("*/daemon-restart.json")).read_text())
    assert probe["restarted"] and probe["old_pids"] and set(probe["new_pids"]).isdisjoint(probe["old_pids"])


@pytest.mark.parametrize(
    "fault",
    [
        "sram-missing",
        "server-down",
        "version-mismatch",
        "old-driver",
        "server-not-supervised",
        "npu-job-timeout",
    ],
)
def test_each_fault_fails_its_check(suite_runs: dict, fault: str) -> None:
    from twins.boards_rockchip import FAULTS

    _, check, phrase = FAULTS[fault]
    run = suite_runs[fault]
    failed = {c for c in TWIN_CHECKS if run.results()[c].status == "fail"}
    assert failed == {check}, run.describe()
    assert phrase in run.message(check), run.message(check)


# --- check 7 on RKNPU: governors pinned for the measurement, and put back whatever happens ------

GOVERNORS = {
    "/sys/class/devfreq/fdab0000.npu/governor": "simple_ondemand",
    "/sys/devices/system/cpu/cpufreq/policy0/scaling_governor": "schedutil",
    "/sys/devices/system/cpu/cpufreq/policy4/scaling_governor": "schedutil",
}


def _pinned_run(twin, model_path: str, work: Path) -> dict:
    """collect_pinned_performance over a real SSH connection to TWIN for one model at MODEL_PATH."""
    import dataclasses

    from npu_accept.collect import upload_tools
    from npu_accept.collectors.governors import collect_pinned_performance
    from npu_accept.profile import load_profile
    from npu_accept.transport import Connection, parse_target

    profiles = packaged_profiles_dir()
    profile = load_profile("rk3588-evb", profiles)
    spec = dataclasses.replace(profile.models[0], path=model_path)
    profile = dataclasses.replace(profile, models=(spec,))
    connection = Connection.open(
        parse_target(twin.target),
        identity=twin.identity,
        known_hosts=twin.known_hosts,
        accept_new_host_key=False,
    )
    try:
        remote = connection.make_temp_dir()
        upload_tools(connection, remote)
        work.mkdir(parents=True, exist_ok=True)
        return collect_pinned_performance(connection, remote, None, profile, work)["pinned_performance"]
    finally:
        connection.close()


def test_governors_are_pinned_for_the_run_and_restored_also_when_it_fails(twin_factory, tmp_path) -> None:  # noqa: ANN001
    from twins.boards_rockchip import HEALTHY_RK3588, rockchip_assets, rockchip_spec

    assets = rockchip_assets(tmp_path / "assets")
    twin = twin_factory(
        rockchip_spec(HEALTHY_RK3588, assets, twin_model([MOBILENET_INPUT], [MOBILENET_OUTPUT]))
    )
    record = _pinned_run(twin, "/usr/share/npu-models/no-such-model.rknn", tmp_path / "failing")
    assert record["governors"] == GOVERNORS
    assert sorted(record["pinned"]) == sorted(GOVERNORS)
    (model,) = record["models"].values()
    assert model["error"] and "status 2" in model["error"], record  # the run itself failed …
    assert record["restored"] is True and record["not_restored"] == []  # … and every governor is back
    for path, value in GOVERNORS.items():
        assert twin.board_path(path).read_text().strip() == value
    assert (tmp_path / "failing" / "pinned-performance.json").is_file()


def test_governors_left_changed_fail_check_7() -> None:
    from npu_accept.checks.registry import run_check
    from npu_accept.facts import BoardFacts
    from npu_accept.profile import load_profile

    profile = load_profile("rk3588-evb", packaged_profiles_dir())
    record = {"models": {}, "restored": False, "not_restored": ["/sys/class/devfreq/fdab0000.npu/governor"]}
    verdict = run_check(
        "performance", BoardFacts("root@rk", info={}, extra={"pinned_performance": record}), profile
    )
    assert verdict.status == "fail" and "not put back as they were" in verdict.message

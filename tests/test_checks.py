# SPDX-License-Identifier: MIT
"""The check functions on their own (no board): every check has facts that make it pass and facts
that make it fail, and the session summary names the root cause."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from npu_accept.checks import CHECK_ORDER, root_cause, run_all, run_check
from npu_accept.checks.delegate import delegated_from_log
from npu_accept.facts import BoardFacts, ModelFacts, RunFacts
from npu_accept.paths import packaged_profiles_dir
from npu_accept.profile import load_profile

PROFILES = packaged_profiles_dir()
# The delegation line of the i.MX95 A0 field report.
SEED_LINE = "INFO: NeutronDelegate delegate: 1 nodes delegated out of 4 nodes with 1 partitions."

INFO = {
    "schema": "npu-info/1",
    "tool_version": "1.0.0",
    "family": "neutron",
    "kernel": "6.12.49-lts-next",
    "soc": {"soc_id": "i.MX95", "revision": "2.0", "family": "Freescale i.MX", "compatible": ["fsl,imx95"]},
    "driver": {
        "name": "neutron",
        "version": "1.0",
        "version_source": "/sys/module/neutron/version",
        "module_loaded": True,
        "devices": ["/dev/neutron0"],
        "firmware": {"name": "NeutronFirmware.elf", "present": True, "state": "running"},
    },
    "runtime": None,
    "daemon": None,
    "delegate": {"path": "/usr/lib/libneutron_delegate.so", "present": True},
    "memory": {"pools": [{"name": "neutron-pool", "size": 134217728, "source": "dt"}]},
    "manifest": {"npu_family": "neutron", "driver": {"version": "1.0"}},
    "errors": [],
}


def _run(
    outputs: list[np.ndarray],
    latency: float,
    delegated: int = 1,
    backend: str = "tflite-delegate",
    exit_code: int = 0,
    quant: tuple[float, int] = (0.0, 0),
) -> RunFacts:
    report = {
        "schema": "npu-run/1",
        "backend": backend,
        "model": {"custom_ops": ["NeutronGraph"] if backend == "tflite-delegate" else []},
        "delegate": {"loaded": True} if backend == "tflite-delegate" else None,
        "nodes": {
            "total": 4,
            "delegated": delegated if backend == "tflite-delegate" else 0,
            "partitions": 1,
            "xnnpack_applied": False,
        },
        "outputs": [
            {"file": f"out{i}.npy", "scale": quant[0], "zero_point": quant[1]} for i in range(len(outputs))
        ],
        "latency_ms": [latency * (1 + 0.01 * i) for i in range(20)],
        "log": {"delegate_lines": [SEED_LINE] if backend == "tflite-delegate" else []},
        "errors": [] if exit_code == 0 else ["invoke failed for x.tflite (NeutronTwin: NPU job failed)."],
    }
    return RunFacts(
        backend=backend,
        model_path="/m.tflite",
        exit_code=exit_code,
        report=report,
        outputs=outputs if exit_code == 0 else [],
    )


@pytest.fixture
def profile():
    return load_profile("imx95-verdin", PROFILES)


def _facts(
    profile, npu_out=None, cpu_out=None, info=None, npu_latency=1.0, cpu_latency=5.0, **run
) -> BoardFacts:
    rng = np.random.default_rng(0)
    reference = rng.normal(size=(1, 1001)).astype(np.float32)
    cpu_out = [reference] if cpu_out is None else cpu_out
    npu_out = [reference.copy()] if npu_out is None else npu_out
    model = ModelFacts(
        spec=profile.models[0],
        npu=_run(npu_out, npu_latency, **run),
        cpu=_run(cpu_out, cpu_latency, backend="tflite-cpu"),
    )
    return BoardFacts(
        target="root@board",
        info=copy.deepcopy(INFO) if info is None else info,
        models=[model],
        extra=healthy_extra(profile),
    )


def healthy_extra(profile) -> dict:
    """What the collectors of checks 8 and 9 record on a healthy board."""
    name = profile.models[0].name
    return {
        "kernel_log": {"lines": BOOT_LOG, "error": None},
        "determinism": {name: {"runs": 3, "digests": [["a"], ["a"], ["a"]], "differs": None}},
    }


BOOT_LOG = [
    "[    0.000000] Linux version 6.12.49-lts-next (oe-user@oe-host) #1 SMP PREEMPT",
    "[    2.120000] remoteproc remoteproc0: remote processor imx95-neutron-rproc is now up",
]


def _with(path: str, value):
    info = copy.deepcopy(INFO)
    node = info
    keys = path.split(".")
    for key in keys[:-1]:
        node = node[key]
    node[keys[-1]] = value
    return info


def test_healthy_facts_pass_every_check(profile):
    results = run_all(_facts(profile), profile)
    assert {c: r.status for c, r in results.items()} == dict.fromkeys(CHECK_ORDER, "pass")
    assert root_cause(results) is None


@pytest.mark.parametrize(
    ("check", "info", "words"),
    [
        ("driver", _with("driver.version", "0.9"), "older than the profile minimum 1.0"),
        ("driver", _with("driver.devices", []), "Device node /dev/neutron0"),
        ("driver", _with("manifest", None), "build manifest"),
        ("driver", _with("manifest.driver.version", "1.1"), "records 1.1"),
        ("driver", _with("driver.firmware.state", "offline"), "is not running"),
        ("silicon", _with("soc.revision", "1.0"), "A0 (revision 1.0): NPU acceleration is supported on B0"),
        ("silicon", _with("soc.revision", "1.1"), "A1 (revision 1.1)"),
        ("silicon", _with("soc.soc_id", "i.MX93"), "The SoC is i.MX93"),
        ("runtime", _with("delegate.present", False), "libneutron_delegate.so is missing"),
        ("memory", _with("memory.pools", []), "pool is missing"),
        ("memory", _with("memory.pools", [{"name": "neutron-pool", "size": 1 << 20}]), "smaller than"),
    ],
)
def test_fact_faults_fail_their_check(profile, check, info, words):
    result = run_check(check, _facts(profile, info=info), profile)
    assert result.status == "fail" and words in result.message, result.message


def test_zero_delegated_nodes_fail(profile):
    result = run_check("delegate", _facts(profile, delegated=0), profile)
    assert result.status == "fail" and "offloaded 0 of 4 nodes" in result.message


def test_log_disagreeing_with_plan_fails(profile):
    result = run_check("delegate", _facts(profile, delegated=3), profile)
    assert result.status == "fail" and "log" in result.message


def test_invoke_failure_fails_delegate_and_skips_outputs(profile):
    facts = _facts(profile, exit_code=1)
    assert run_check("delegate", facts, profile).status == "fail"
    assert run_check("outputs", facts, profile).status == "skip"
    assert run_check("performance", facts, profile).status == "skip"


def test_a0_field_report_log_line_counts():
    assert delegated_from_log([SEED_LINE]) == 1
    assert (
        delegated_from_log(
            ["INFO: Replacing 3 out of 9 node(s) with delegate (X) node, yielding 2 partitions"]
        )
        == 3
    )
    assert delegated_from_log(["nothing"]) is None
    xnnpack = (
        "INFO: Replacing 160 out of 164 node(s) with delegate (TfLiteXNNPackDelegate) node, "
        "yielding 1 partitions"
    )
    assert delegated_from_log([SEED_LINE, xnnpack]) == 1 and delegated_from_log([xnnpack]) is None


def test_a0_field_report_constant_rows_fail_outputs(profile):
    rng = np.random.default_rng(1)
    cpu = rng.uniform(0, 1, size=(172, 6)).astype(np.float32)
    npu = np.tile(np.array([0.5, 0.5, 0.227, 0.227, 0.227, 0.227], np.float32), (172, 1))
    result = run_check("outputs", _facts(profile, npu_out=[npu], cpu_out=[cpu]), profile)
    assert result.status == "fail" and result.cause == "degenerate", result.message


def test_uint8_zero_point_trap_fails_outputs(profile):
    # A constant 128 with zero point 128 scores cosine ~0.999 on raw values; dequantized it is all zeros.
    rng = np.random.default_rng(2)
    cpu = np.clip(rng.normal(128, 3, size=(1, 1001)), 0, 255).astype(np.uint8)
    npu = np.full((1, 1001), 128, np.uint8)
    result = run_check("outputs", _facts(profile, npu_out=[npu], cpu_out=[cpu], quant=(0.0039, 128)), profile)
    assert result.status == "fail", result.message


def test_slow_npu_fails_speedup(profile):
    result = run_check("performance", _facts(profile, npu_latency=4.0, cpu_latency=5.0), profile)
    assert result.status == "fail" and "below the profile minimum 2x" in result.message


def test_regression_against_baseline(profile):
    facts = _facts(profile, npu_latency=1.0)
    facts.baseline = {"models": {"mobilenet_v1_quant": {"p50_ms": 0.5}}}
    assert "regressed" in run_check("performance", facts, profile).message
    facts.baseline = {"models": {"mobilenet_v1_quant": {"p50_ms": 0.95}}}
    assert run_check("performance", facts, profile).status == "pass"


def test_unreachable_board_fails_every_check_with_its_sentence(profile):
    facts = BoardFacts(target="root@board", collect_error="Board root@board is unreachable; check it.")
    results = run_all(facts, profile)
    assert {r.status for r in results.values()} == {"fail"}
    assert root_cause(results) == "Board root@board is unreachable; check it."


def test_a0_field_report_summary_names_a0(profile):
    rng = np.random.default_rng(1)
    cpu = rng.uniform(0, 1, size=(172, 6)).astype(np.float32)
    npu = np.tile(np.array([0.5, 0.5, 0.227, 0.227, 0.227, 0.227], np.float32), (172, 1))
    facts = _facts(profile, npu_out=[npu], cpu_out=[cpu], info=_with("soc.revision", "1.0"))
    assert root_cause(run_all(facts, profile)) == (
        "NPU outputs are degenerate and the SoC is i.MX95 A0 (revision 1.0): NPU acceleration is supported "
        "on B0 silicon only — this board cannot pass."
    )


def test_lowest_failing_layer_is_the_root_cause(profile):
    facts = _facts(profile, info=_with("driver.version", "0.9"), npu_latency=4.0)
    sentence = root_cause(run_all(facts, profile))
    assert sentence is not None and sentence.startswith("The neutron driver version 0.9")
    assert "(performance)" in sentence


def test_generic_cpu_skips_npu_checks():
    profile = load_profile("generic-cpu", PROFILES)
    out = [np.random.default_rng(3).normal(size=(1, 1001)).astype(np.float32)]
    facts = BoardFacts(
        target="root@pc",
        info=copy.deepcopy(INFO),
        models=[ModelFacts(spec=profile.models[0], npu=_run(out, 3.0, backend="tflite-cpu"))],
        extra={"determinism": {profile.models[0].name: {"runs": 3, "digests": [["a"]] * 3, "differs": None}}},
    )
    results = run_all(facts, profile)
    assert {c for c, r in results.items() if r.status == "skip"} == {
        "driver",
        "runtime",
        "delegate",
        "memory",
        "silicon",
        "kernel_log",
        "pairing",
    }
    assert results["determinism"].status == "pass"
    assert results["outputs"].status == "pass" and results["performance"].status == "pass"
    facts.models[0].npu.outputs = [np.zeros((1, 1001), np.float32)]
    assert run_all(facts, profile)["outputs"].status == "fail"


def test_golden_references_are_compared(profile, tmp_path):
    rng = np.random.default_rng(4)
    golden = rng.normal(size=(1, 1001)).astype(np.float32)
    facts = _facts(profile, npu_out=[golden.copy()], cpu_out=[golden.copy()])
    facts.models[0].golden = [golden]
    result = run_check("outputs", facts, profile)
    assert result.status == "pass" and "CPU and golden reference" in result.message
    facts.models[0].golden = [-golden]
    result = run_check("outputs", facts, profile)
    assert result.status == "fail" and "golden reference" in result.message


def test_a0_field_report_landmarks_one_repeated_constant_fail_outputs(profile):
    rng = np.random.default_rng(5)
    cpu = rng.uniform(0.2, 0.8, size=(1, 70)).astype(np.float32)  # 35 interleaved (x, y) points
    npu = np.full((1, 70), 0.4921875, np.float32)
    result = run_check("outputs", _facts(profile, npu_out=[npu], cpu_out=[cpu]), profile)
    assert result.status == "fail" and result.cause == "degenerate", result.message


def test_generic_cpu_run_failure_fails_outputs():
    profile = load_profile("generic-cpu", PROFILES)
    run = _run([], 1.0, backend="tflite-cpu", exit_code=1)
    facts = BoardFacts(
        target="root@pc", info=copy.deepcopy(INFO), models=[ModelFacts(spec=profile.models[0], npu=run)]
    )
    result = run_check("outputs", facts, profile)
    assert result.status == "fail" and "did not run on the CPU" in result.message


def test_vendor_model_without_cpu_reference(profile):
    rng = np.random.default_rng(6)
    out = rng.normal(size=(1, 1001)).astype(np.float32)
    facts = _facts(profile, npu_out=[out])
    facts.models[0].cpu = None  # e.g. an .rknn model: no CPU run unless the profile names a reference
    assert "no reference to compare against" in run_check("outputs", facts, profile).message
    assert "no CPU reference model, so no speedup" in run_check("performance", facts, profile).message
    facts.models[0].golden = [out.copy()]
    assert "match the golden reference" in run_check("outputs", facts, profile).message


def test_model_replaced_after_the_build_fails_delegate(profile):
    facts = _facts(profile)
    facts.models[0].npu.report["model"]["sha256"] = "a" * 64
    facts.info["manifest"]["models"] = [{"path": profile.models[0].path, "sha256": "b" * 64}]
    result = run_check("delegate", facts, profile)
    assert result.status == "fail" and "is not the one the image was built with" in result.message
    facts.info["manifest"]["models"][0]["sha256"] = "a" * 64
    assert run_check("delegate", facts, profile).status == "pass"


SMMU_FAULT = "[   41.220110] arm-smmu-v3 490d0000.iommu: event 0x10 received:"


def test_kernel_log_fault_since_boot_fails(profile):
    facts = _facts(profile)
    facts.info["kernel_log"] = {"lines": 3, "last_timestamp": 50.0, "readable": True}
    facts.extra["kernel_log"]["lines"] = [*BOOT_LOG, SMMU_FAULT]
    result = run_check("kernel_log", facts, profile)
    assert result.status == "fail" and "since boot (before the run)" in result.message
    assert "SMMU blocked a DMA access" in result.message and "event 0x10 received" in result.message


def test_kernel_log_fault_during_the_run_is_named_so(profile):
    facts = _facts(profile)
    facts.info["kernel_log"] = {"lines": 2, "last_timestamp": 2.12, "readable": True}
    facts.extra["kernel_log"]["lines"] = [*BOOT_LOG, SMMU_FAULT]
    result = run_check("kernel_log", facts, profile)
    assert result.status == "fail" and "during the run" in result.message, result.message
    assert result.details["during_run"] == 1


def test_kernel_log_allowlist_and_near_miss_pass(profile):
    facts = _facts(profile)
    facts.extra["kernel_log"]["lines"] = [
        *BOOT_LOG,
        "[    0.81] arm-smmu-v3 490d0000.iommu: ias 48-bit, oas 48-bit",
    ]
    assert run_check("kernel_log", facts, profile).status == "pass"
    facts.extra["kernel_log"]["lines"] = [*BOOT_LOG, SMMU_FAULT]
    allowing = _profile_with(profile, kernel_log={"allow": [r"490d0000\.iommu: event 0x10"]})
    result = run_check("kernel_log", facts, allowing)
    assert result.status == "pass" and "1 allowlist pattern" in result.message


def test_kernel_log_unreadable_fails_with_the_fix(profile):
    facts = _facts(profile)
    facts.extra["kernel_log"] = {"lines": [], "error": "dmesg failed with status 1 (Operation not permitted)"}
    result = run_check("kernel_log", facts, profile)
    assert result.status == "fail" and "kernel.dmesg_restrict=0" in result.message


def test_determinism_different_outputs_fail(profile):
    facts = _facts(profile)
    name = profile.models[0].name
    facts.extra["determinism"][name] = {
        "runs": 3,
        "digests": [["a"], ["b"], ["a"]],
        "differs": {"run": 2, "what": "output 0 differs in 1 of 1001 values (largest at flat index 7)"},
    }
    result = run_check("determinism", facts, profile)
    assert result.status == "fail" and "run 2 of 3 differs from run 1" in result.message


def test_determinism_not_collected_fails(profile):
    facts = _facts(profile)
    del facts.extra["determinism"]
    assert run_check("determinism", facts, profile).status == "fail"


def test_pairing_neutron_sdk_of_another_bsp_fails(profile):
    facts = _facts(profile, info=_with("kernel", "6.12.20-lts-next"))
    result = run_check("pairing", facts, profile)
    assert result.status == "fail" and "Neutron SDK 2.2.2 of BSP LF 6.12.49_2.2.0" in result.message
    assert run_check("pairing", _facts(profile), profile).status == "pass"


def test_pairing_neutron_delegate_with_an_unreadable_kernel_release(profile):
    """The delegate version of the i.MX95 field report on a board whose kernel release carries no
    version: like the SDK half, the delegate half is not judged (it raised TypeError: None in str)."""
    for kernel in ("6.12.49-lts-next-g759f4038100f", "localbuild"):
        facts = _facts(profile, info=_with("kernel", kernel))
        facts.models[0].npu.report["log"]["delegate_lines"].append(
            "Neutron delegate version: v1.0.0-f24d08e5"
        )
        result = run_check("pairing", facts, profile)
        assert result.status == "pass" and "delegate v1.0.0-f24d08e5" in result.message, result.message


def test_pairing_neutron_without_converter_in_profile_skips(profile):
    result = run_check("pairing", _facts(profile), _profile_with(profile, pairing=None))
    assert result.status == "skip" and "pairing.converter" in result.message


def test_pairing_rknn_toolkit_newer_than_runtime_fails():
    rk = load_profile("rk3588-evb", PROFILES)
    info = {"family": "rknpu", "runtime": {"name": "librknnrt", "version": "2.3.0"}}
    files = {m.name: {"format": "rknn", "toolkit": "2.3.2"} for m in rk.models}
    facts = BoardFacts("root@rk", info=info, extra={"model_files": files})
    result = run_check("pairing", facts, rk)
    assert result.status == "fail" and "RKNN-Toolkit2 2.3.2 but the board's librknnrt is the older 2.3.0" in (
        result.message
    )
    facts.info["runtime"]["version"] = "2.3.2"
    assert run_check("pairing", facts, rk).status == "pass"


def test_pairing_cvimodel_for_another_chip_fails():
    duo = load_profile("milkv-duo256m", PROFILES)
    name = duo.models[0].name
    info = {"family": "cvitek-tpu", "driver": {"chip": "cv181x"}}
    facts = BoardFacts(
        "root@duo", info=info, extra={"model_files": {name: {"format": "cvimodel", "chip": "cv180x"}}}
    )
    result = run_check("pairing", facts, duo)
    assert result.status == "fail" and "compiled for cv180x but the board is cv181x" in result.message
    facts.extra["model_files"][name]["chip"] = "cv181x"
    assert run_check("pairing", facts, duo).status == "pass"


def _profile_with(profile, **changes):
    import dataclasses

    return dataclasses.replace(profile, **changes)


# A family whose driver is part of the kernel and has no version of its own in the manifest
# (RKNPU in the vendor kernel, Rocket in mainline: npu-base.bbclass records the kernel as the
# driver's recipe and NPU_DRIVER_VERSION stays unset): the manifest's driver record is the kernel's.
KERNEL_PART = {
    "npu_family": "neutron",
    "kernel": {"recipe": "linux-imx", "version": "6.12.49"},
    "driver": {"recipe": "linux-imx", "version": "6.12.49"},
}


def test_a_driver_inside_the_kernel_is_compared_by_the_kernel_the_image_built(profile):
    info = _with("manifest", copy.deepcopy(KERNEL_PART))
    result = run_check("driver", _facts(profile, info=info), profile)
    assert result.status == "pass", result.message  # driver 1.0 is not compared with 6.12.49
    assert "part of kernel 6.12.49" in result.message
    info["kernel"] = "6.6.36-lts-next"
    result = run_check("driver", _facts(profile, info=info), profile)
    assert result.status == "fail" and "runs kernel 6.6.36-lts-next" in result.message
    assert "records kernel 6.12.49" in result.message


def test_a_manifest_with_a_driver_version_of_its_own_still_compares_it(profile):
    manifest = {**copy.deepcopy(KERNEL_PART), "driver": {"recipe": "linux-imx", "version": "1.1"}}
    result = run_check("driver", _facts(profile, info=_with("manifest", manifest)), profile)
    assert result.status == "fail" and "records 1.1" in result.message

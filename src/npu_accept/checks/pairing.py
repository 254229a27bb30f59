# SPDX-License-Identifier: MIT
"""Check 10 — model ⇄ runtime pairing: the converter or toolkit that made each model belongs with
the runtime on the board (the known-pairings rules of `npu_accept.diagnose.pairings`).

- neutron: the profile's `pairing.converter` (the Neutron SDK the model was converted with,
  `NeutronSDK_x.y.z+LF_a.b.c_…`) against the board's kernel, and the delegate's version line;
- rknpu: the RKNN-Toolkit2 version recorded in each .rknn against the board's librknnrt;
- cvitek-tpu: the chip recorded in each .cvimodel against the board's chip.
"""

from __future__ import annotations

from npu_accept.checks.base import CheckResult, failed, passed, skipped
from npu_accept.collectors.model_files import FACT_KEY, collect_model_files
from npu_accept.diagnose import pairings
from npu_accept.facts import BoardFacts
from npu_accept.logparse import DELEGATE_VERSION
from npu_accept.profile import Profile

CHECK = "pairing"


def check_neutron_pairing(facts: BoardFacts, profile: Profile) -> CheckResult:
    converter = profile.pairing.get("converter") if profile.pairing else None
    if not converter:
        return skipped(
            CHECK,
            f"Profile {profile.name} does not say which Neutron SDK converted its models "
            "(pairing.converter, e.g. NeutronSDK_2.2.2+LF_6.12.49_2.2.0).",
        )
    sdk = pairings.neutron_sdk(str(converter))
    if sdk is None:
        return failed(
            CHECK,
            f"Profile {profile.name}: pairing.converter '{converter}' is not a Neutron SDK name "
            "(NeutronSDK_<version>+LF_<bsp>); give the SDK directory the model was converted with.",
            "profile",
        )
    kernel = (facts.info or {}).get("kernel")
    clause = pairings.neutron_mismatch(sdk, kernel)
    if clause:
        return failed(
            CHECK,
            f"The model and the board do not pair: {clause}; convert with the Neutron SDK of the "
            "board's BSP or flash the BSP the SDK belongs to.",
            "converter-bsp",
        )
    version = _delegate_version(facts)
    bsp = pairings.known_delegate_bsp(version)
    board_kernel = pairings.kernel_version(kernel)  # None when the release is unreadable: not judged
    if bsp and board_kernel is not None and board_kernel not in bsp:
        return failed(
            CHECK,
            f"The Neutron delegate {version} belongs to {bsp} but the board runs kernel {kernel}; "
            "install the delegate of the board's BSP release.",
            "delegate-bsp",
        )
    return passed(
        CHECK,
        f"The models were converted with Neutron SDK {sdk.sdk} of BSP LF {sdk.bsp}, which pairs with "
        f"the board's kernel {kernel}" + (f" and delegate {version}" if version else "") + ".",
    )


def _delegate_version(facts: BoardFacts) -> str | None:
    for model in facts.models:
        lines = ((model.npu.report or {}).get("log") or {}).get("delegate_lines") if model.npu else None
        for line in lines or []:
            match = DELEGATE_VERSION.search(str(line))
            if match:
                return match.group("version")
    return None


def check_rknn_pairing(facts: BoardFacts, profile: Profile) -> CheckResult:
    runtime = ((facts.info or {}).get("runtime") or {}).get("version")
    records = facts.extra.get(FACT_KEY)
    if not isinstance(records, dict):
        return failed(
            CHECK, "The models on the board were not read; run the suite over SSH.", "pairing-unknown"
        )
    said = []
    for spec in profile.models:
        record = records.get(spec.name) or {}
        if record.get("error"):
            return failed(
                CHECK, f"Model {spec.name}: {record['error']}; check the model path.", "model-unreadable"
            )
        if record.get("format") != "rknn" or not record.get("toolkit"):
            return failed(
                CHECK,
                f"Model {spec.name} ({spec.path}) records no RKNN-Toolkit2 version (not a .rknn exported "
                "by RKNN-Toolkit2); export it again with the toolkit of the board's runtime.",
                "model-unknown-maker",
            )
        clause = pairings.rknn_mismatch(record["toolkit"], runtime)
        if clause:
            return failed(
                CHECK,
                f"Model {spec.name} and the runtime do not pair: {clause}; install librknnrt and "
                "rknn_server of the toolkit's release or export the model with the runtime's toolkit.",
                "toolkit-runtime",
            )
        said.append(f"{spec.name} (RKNN-Toolkit2 {record['toolkit']})")
    if not said:
        return skipped(CHECK, f"Profile {profile.name} lists no RKNN model.")
    return passed(CHECK, f"The models {', '.join(said)} pair with librknnrt {runtime} on the board.")


def check_cvimodel_pairing(facts: BoardFacts, profile: Profile) -> CheckResult:
    board = ((facts.info or {}).get("driver") or {}).get("chip")
    records = facts.extra.get(FACT_KEY)
    if not isinstance(records, dict):
        return failed(
            CHECK, "The models on the board were not read; run the suite over SSH.", "pairing-unknown"
        )
    said = []
    for spec in profile.models:
        record = records.get(spec.name) or {}
        if record.get("error"):
            return failed(
                CHECK, f"Model {spec.name}: {record['error']}; check the model path.", "model-unreadable"
            )
        chip = record.get("chip") or "cv183x"  # a version 1.0 header has no chip field (cviruntime model.cpp)
        if record.get("format") != "cvimodel":
            return failed(CHECK, f"Model {spec.name} ({spec.path}) is not a cvimodel.", "model-unknown-maker")
        if board and chip != board:
            return failed(
                CHECK,
                f"Model {spec.name} was compiled for {chip} but the board is {board}; compile it again "
                f"with model_deploy --processor {board}.",
                "cvimodel-chip",
            )
        said.append(f"{spec.name} ({chip})")
    return passed(CHECK, f"The models {', '.join(said)} are compiled for the board's chip {board}.")


def check_no_pairing(facts: BoardFacts, profile: Profile) -> CheckResult:
    return skipped(CHECK, f"Profile {profile.name}: family {profile.family} runs TFLite models as they are.")


IMPLEMENTS = {
    (CHECK, "neutron"): check_neutron_pairing,
    (CHECK, "rknpu"): check_rknn_pairing,
    (CHECK, "cvitek-tpu"): check_cvimodel_pairing,
    (CHECK, "*"): check_no_pairing,
}
COLLECTORS = {"rknpu": collect_model_files, "cvitek-tpu": collect_model_files}

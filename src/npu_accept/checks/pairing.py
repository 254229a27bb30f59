# SPDX-License-Identifier: MIT
"""Check 10 — model ⇄ runtime pairing: the converter or toolkit that made each model belongs with
the runtime on the board.

The judge of a family whose models are made by its own converter lives in the family's package
(`npu_accept.families.<family>.checks`, registered by `npu_accept.checks.registry`): neutron (the
Neutron SDK against the BSP), rknpu (RKNN-Toolkit2 against librknnrt), cvitek-tpu (the
cvimodel's chip).  This module is the fallback of every other family: a family whose backend runs
TFLite models as they are (rocket, and a board without an NPU) has nothing to pair; any other
family without a judge fails with one sentence naming the file to add, never a silent skip.
"""

from __future__ import annotations

from typing import Any

from npu_target.families import family

from npu_accept.checks.base import CheckResult, failed, skipped
from npu_accept.collectors.model_files import FACT_KEY
from npu_accept.facts import BoardFacts
from npu_accept.profile import ModelSpec, Profile

CHECK = "pairing"
TFLITE_BACKENDS = ("tflite-cpu", "tflite-delegate")


def check_no_pairing(facts: BoardFacts, profile: Profile) -> CheckResult:
    record = family(profile.family)
    if record is None or record.backend in TFLITE_BACKENDS:
        return skipped(
            CHECK, f"Profile {profile.name}: family {profile.family} runs TFLite models as they are."
        )
    package = profile.family.replace("-", "_")
    return failed(
        CHECK,
        f"Family {profile.family} runs its models on backend {record.backend} but has no pairing check; "
        f"add IMPLEMENTS = {{('pairing', '{profile.family}'): …}} to "
        f"npu_accept/families/{package}/checks.py.",
        "no-check",
    )


def model_records(
    facts: BoardFacts, profile: Profile
) -> list[tuple[ModelSpec, dict[str, Any]]] | CheckResult:
    """What collectors.model_files read of each profile model's file on the board, or the failed
    result when it was not read or a file could not be: the start of a family's pairing judge."""
    records = facts.extra.get(FACT_KEY)
    if not isinstance(records, dict):
        return failed(
            CHECK, "The models on the board were not read; run the suite over SSH.", "pairing-unknown"
        )
    found = []
    for spec in profile.models:
        record = records.get(spec.name) or {}
        if record.get("error"):
            return failed(
                CHECK, f"Model {spec.name}: {record['error']}; check the model path.", "model-unreadable"
            )
        found.append((spec, record))
    return found


IMPLEMENTS = {(CHECK, "*"): check_no_pairing}

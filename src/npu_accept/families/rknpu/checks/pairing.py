# SPDX-License-Identifier: MIT
"""The rknpu family's checks: check 10 (pairing) — the RKNN-Toolkit2 version recorded in each .rknn
against the board's librknnrt (the rules of `npu_accept.diagnose.pairings`).
"""

from __future__ import annotations

from npu_accept.checks.base import CheckResult, failed, passed, skipped
from npu_accept.checks.pairing import model_records
from npu_accept.collectors.model_files import collect_model_files
from npu_accept.facts import BoardFacts
from npu_accept.families.rknpu import pairing
from npu_accept.profile import Profile

CHECK = "pairing"


def check_rknn_pairing(facts: BoardFacts, profile: Profile) -> CheckResult:
    runtime = ((facts.info or {}).get("runtime") or {}).get("version")
    records = model_records(facts, profile)
    if isinstance(records, CheckResult):
        return records
    said = []
    for spec, record in records:
        if record.get("format") != "rknn" or not record.get("toolkit"):
            return failed(
                CHECK,
                f"Model {spec.name} ({spec.path}) records no RKNN-Toolkit2 version (not a .rknn exported "
                "by RKNN-Toolkit2); export it again with the toolkit of the board's runtime.",
                "model-unknown-maker",
            )
        clause = pairing.rknn_mismatch(record["toolkit"], runtime)
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


IMPLEMENTS = {(CHECK, "rknpu"): check_rknn_pairing}
COLLECTORS = {"rknpu": collect_model_files}

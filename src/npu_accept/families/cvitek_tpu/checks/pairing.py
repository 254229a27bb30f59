# SPDX-License-Identifier: MIT
"""The cvitek-tpu family's checks: check 10 (pairing) — the chip recorded in each .cvimodel against
the board's chip.
"""

from __future__ import annotations

from npu_accept.checks.base import CheckResult, failed, passed
from npu_accept.checks.pairing import model_records
from npu_accept.collectors.model_files import collect_model_files
from npu_accept.facts import BoardFacts
from npu_accept.profile import Profile

CHECK = "pairing"


def check_cvimodel_pairing(facts: BoardFacts, profile: Profile) -> CheckResult:
    board = ((facts.info or {}).get("driver") or {}).get("chip")
    records = model_records(facts, profile)
    if isinstance(records, CheckResult):
        return records
    said = []
    for spec, record in records:
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


IMPLEMENTS = {(CHECK, "cvitek-tpu"): check_cvimodel_pairing}
COLLECTORS = {"cvitek-tpu": collect_model_files}

# SPDX-License-Identifier: MIT
"""Check 9 — determinism: the same input, run N times on the NPU (profile `determinism.runs`,
default 3, the suite's first NPU run included), gives byte-identical outputs every time."""

from __future__ import annotations

from npu_accept.checks.base import CheckResult, failed, passed, skipped
from npu_accept.collectors.determinism import FACT_KEY, collect_determinism, runs_wanted
from npu_accept.facts import BoardFacts
from npu_accept.profile import Profile

CHECK = "determinism"


def check_determinism(facts: BoardFacts, profile: Profile) -> CheckResult:
    label = "NPU" if profile.has_npu else "CPU"
    records = facts.extra.get(FACT_KEY)
    ran = [m for m in facts.models if m.npu is not None and m.npu.ok and m.npu.outputs]
    if not ran:
        return skipped(
            CHECK, f"No model ran on the {label}, so there is nothing to repeat (check 4 names why)."
        )
    if not isinstance(records, dict):
        return failed(
            CHECK,
            "The models were not run again; run the suite over SSH (npu_accept.collect) so they can be.",
            "determinism-unknown",
        )
    said = []
    for model in ran:
        name = model.spec.name
        record = records.get(name) or {}
        if record.get("error"):
            return failed(
                CHECK, f"Model {name} could not be run again on the {label} ({record['error']}).", "rerun"
            )
        differs = record.get("differs")
        if differs:
            return failed(
                CHECK,
                f"Model {name} gave different outputs for the same input on the {label}: run "
                f"{differs['run']} of {record.get('runs')} differs from run 1 ({differs['what']}); the NPU "
                "or its driver is not deterministic — check the kernel log, the NPU's clocks and memory, "
                "and the runtime's multi-core and caching settings.",
                "nondeterministic",
                digests=record.get("digests"),
            )
        said.append(f"{name} {len(record.get('digests') or [])}x")
    runs = runs_wanted(profile)
    return passed(
        CHECK,
        f"The same input gave byte-identical outputs on the {label} in {runs} runs each ({', '.join(said)}).",
    )


IMPLEMENTS = {(CHECK, "*"): check_determinism}
COLLECTORS = {"*": collect_determinism}

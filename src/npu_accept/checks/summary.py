# SPDX-License-Identifier: MIT
"""The session summary: when checks fail, one sentence naming the root cause the suite can see.

Causes are ranked: a silicon revision the NPU stack does not support explains everything after
it (the i.MX95 A0 field report: degenerate outputs), then a board that could not be examined, the
driver, the memory pool, the model's pairing with the runtime, the runtime, kernel faults, the
delegate, the outputs, determinism, the performance.
"""

from __future__ import annotations

from collections.abc import Mapping

from npu_accept.checks.base import CHECK_ORDER, CheckResult
from npu_accept.checks.roster import ROSTER

_SYMPTOMS = {check.id: check.symptom for check in ROSTER if check.symptom}
# Deepest cause first; silicon (rank 0) is handled before the others.
_RANK = tuple(check.id for check in sorted(ROSTER, key=lambda c: c.rank) if check.rank > 0)


def root_cause(results: Mapping[str, CheckResult]) -> str | None:
    """One sentence naming the root cause of the failures of one board, None if nothing failed."""
    failing = [results[c] for c in CHECK_ORDER if c in results and results[c].status == "fail"]
    if not failing:
        return None
    if any(r.cause == "unreachable" for r in failing):
        return failing[0].message
    silicon = results.get("silicon")
    if silicon is not None and silicon.status == "fail" and silicon.cause == "silicon-bad-revision":
        others = [r for r in failing if r.check != "silicon"]
        label = silicon.details.get("soc_label", "unsupported")
        reason = silicon.details.get("reason", "the NPU stack does not support it")
        if others:
            return (
                f"{_capitalize(_symptom(others))} and the SoC is {label}: {reason} — this board cannot pass."
            )
        return f"The SoC is {label}: {reason} — this board cannot pass."
    if len(failing) == 1:
        return failing[0].message
    first = next(r for c in ("silicon", *_RANK) for r in failing if r.check == c)
    rest = ", ".join(r.check for r in failing if r is not first)
    return f"{first.message.rstrip('.')} — fix this first, it lies below the other failing checks ({rest})."


def _symptom(results: list[CheckResult]) -> str:
    words = []
    for result in results:
        if result.check == "outputs" and result.cause == "degenerate":
            words.append("NPU outputs are degenerate")
        else:
            words.append(_SYMPTOMS.get(result.check, f"check {result.check} fails"))
    return " and ".join(dict.fromkeys(words))


def _capitalize(text: str) -> str:
    return text[:1].upper() + text[1:]

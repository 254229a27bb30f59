# SPDX-License-Identifier: MIT
"""The ten checks, one record each: the only list of checks.

A check carries its number and id (test names, report rows, JUnit, LAVA and oeqa use them), its
title, the symptom and rank the root-cause summary reasons with, and the facts it needs from the
board, so the suite collects only what the selected checks need (`npu-accept run -k driver` runs
no model).  The judges are registered per family by the check modules (`IMPLEMENTS`); the
pytest items (pytests/test_<number>_<id>.py), the oeqa methods, the reports and docs/design.md
are held to this roster by tests/test_roster.py.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from npu_accept.facts import Work

# What a check needs from the board, beyond npu-info (which every examination runs first).
MODELS = "models"  # the profile's models run once on the NPU backend (and the CPU reference)
TIMED_RUNS = "timed-runs"  # those runs repeated profile.performance.runs times, after warm-up
KERNEL_LOG = "kernel-log"  # dmesg since boot


@dataclass(frozen=True)
class Check:
    number: int
    id: str
    title: str
    symptom: str | None  # what the summary says when this check fails beside a deeper cause
    rank: int  # root-cause order: the lowest failing rank explains the others
    needs: frozenset[str] = frozenset()

    @property
    def heading(self) -> str:
        return f"{self.number}. {self.title}"

    @property
    def test_module(self) -> str:
        return f"test_{self.number}_{self.id}"


def _check(number: int, ident: str, title: str, symptom: str | None, rank: int, *needs: str) -> Check:
    return Check(number, ident, title, symptom, rank, frozenset(needs))


ROSTER: tuple[Check, ...] = (
    _check(1, "driver", "Driver", "the NPU driver is wrong", 1),
    _check(2, "silicon", "Silicon revision", None, 0),
    _check(3, "runtime", "Runtime and daemon", "the NPU runtime is broken", 4, MODELS),
    _check(4, "delegate", "Delegate loading", "the delegate does not run the model on the NPU", 6, MODELS),
    _check(5, "outputs", "Output correctness", "NPU outputs are wrong", 7, MODELS),
    _check(6, "memory", "SRAM / memory pools", "the NPU memory pool is wrong", 2, MODELS),
    _check(7, "performance", "Performance", "the NPU is slower than expected", 9, MODELS, TIMED_RUNS),
    _check(8, "kernel_log", "Kernel log", "the kernel reports NPU faults", 5, KERNEL_LOG),
    _check(9, "determinism", "Determinism", "NPU outputs change from run to run", 8, MODELS),
    _check(10, "pairing", "Model and runtime pairing", "the model was not made for this runtime", 3, MODELS),
)
BY_ID: dict[str, Check] = {check.id: check for check in ROSTER}


def needs_of(checks: Iterable[str] | None) -> frozenset[str]:
    """Everything the given checks need (all checks when None)."""
    chosen = ROSTER if checks is None else [BY_ID[c] for c in checks if c in BY_ID]
    return frozenset(need for check in chosen for need in check.needs)


def serving(need: str) -> frozenset[str]:
    """The checks that need `need` (MODELS, TIMED_RUNS, KERNEL_LOG)."""
    return frozenset(check.id for check in ROSTER if need in check.needs)


def check_seconds(
    work: Iterable[Work], judged: Mapping[str, float], checks: Iterable[str] | None = None
) -> dict[str, float]:
    """Each selected check's own time on one board (its JUnit time): its judging, and its share
    of the examination. A stretch of the examination that served several selected checks is
    shared equally among them; one that served every check (connecting, npu-info) or none of the
    selected ones is shared among all selected. So a board's check times add up to its
    examination and judging, and `-k driver` carries its whole run."""
    chosen = set(checks) if checks is not None else None
    selected = [check.id for check in ROSTER if chosen is None or check.id in chosen]
    seconds = {check: judged.get(check, 0.0) for check in selected}
    for stretch in work:
        served = [c for c in selected if stretch.serves is None or c in stretch.serves] or selected
        for check in served:
            seconds[check] += stretch.seconds / len(served)
    return seconds

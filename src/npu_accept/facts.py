# SPDX-License-Identifier: MIT
"""What the suite learned from one board: the records the checks read.

The collector (`npu_accept.collect`) fills these over SSH; the checks (`npu_accept.checks`) are
pure functions of them, so the oeqa bridge and unit tests can build them from any source.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from npu_accept.profile import ModelSpec


@dataclass
class RunFacts:
    """One `npu-run --json` invocation on the board."""

    backend: str
    model_path: str
    exit_code: int | None
    report: dict[str, Any] | None  # the npu-run/1 JSON, None when none was printed
    outputs: list[np.ndarray] = field(default_factory=list)  # raw tensors pulled from the board
    stderr: str = ""
    error: str | None = None  # one sentence when the run could not happen at all

    @property
    def ok(self) -> bool:
        return self.error is None and self.exit_code == 0 and self.report is not None

    @property
    def latencies_ms(self) -> list[float]:
        return [float(x) for x in (self.report or {}).get("latency_ms") or []]

    def first_error(self) -> str:
        """The most telling error sentence of this run: what went wrong, and the cause its log
        shows where the signature catalogue (npu_accept.diagnose) knows the runtime's lines."""
        errors = [str(e) for e in (self.report or {}).get("errors") or []]
        if self.error:
            said = self.error
        elif errors:
            said = errors[0].rstrip(".")
        else:
            tail = self.stderr.strip().splitlines()
            said = tail[-1] if tail else f"npu-run exited with status {self.exit_code}"
        from npu_accept.diagnose.explain import explain

        cause = explain("\n".join([*errors, self.stderr]))
        return f"{said}; the log names the cause: {cause.sentence.rstrip('.')}" if cause else said


@dataclass
class ModelFacts:
    """The NPU run, the CPU reference run and the golden outputs of one profile model."""

    spec: ModelSpec
    npu: RunFacts | None = None
    cpu: RunFacts | None = None
    golden: list[np.ndarray] = field(default_factory=list)
    remote_inputs: list[str] = field(default_factory=list)  # the inputs on the board, while connected


@dataclass(frozen=True)
class Work:
    """A stretch of one board's examination and the checks it served: None for every selected
    check (connecting, npu-info, closing), else the checks that need it (a model run, the timed
    loop, a collector); `npu_accept.checks.roster.check_seconds` shares it among them."""

    seconds: float
    serves: frozenset[str] | None = None


@dataclass
class BoardFacts:
    """Everything the checks need to judge one board."""

    target: str
    info: dict[str, Any] | None = None  # npu-info/1 JSON
    info_error: str | None = None
    models: list[ModelFacts] = field(default_factory=list)
    baseline: dict[str, Any] | None = None  # this board's entry of a --baseline file
    extra: dict[str, Any] = field(default_factory=dict)  # facts of family collectors
    collect_error: str | None = None  # the board could not be examined at all
    unreachable: bool = False  # no SSH connection could be made (exit status 3 when all are)
    collect_seconds: float = 0.0
    timings: dict[str, float] = field(default_factory=dict)  # seconds per phase of the examination
    work: list[Work] = field(default_factory=list)  # the same time, by the checks each stretch served

    def info_section(self, key: str) -> dict[str, Any]:
        value = (self.info or {}).get(key)
        return value if isinstance(value, dict) else {}

# SPDX-License-Identifier: MIT
"""Kernel log lines that mean the NPU (or the memory path in front of it) failed, per NPU family.

One table for both users: `npu-diagnose` reads a pasted dmesg, and check 8 (kernel log) reads the
board's `dmesg` since boot and during the run.  The wordings are the signature catalogue's kernel
entries (`npu_accept.families.<family>/signatures.yaml`, `kernel: true`), matched on each line's
message with its wrapping (timestamp, journald or syslog prefix) taken off; every one is a wording
the kernel itself prints (sources in docs/PROVENANCE.md); a profile may allowlist harmless lines.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from npu_accept.diagnose.lines import unwrap

ANY_FAMILY = "*"
TIMESTAMP = re.compile(r"^\s*(?:<\d+>)?\[\s*(?P<seconds>\d+\.\d+)\]")


@dataclass(frozen=True)
class FaultPattern:
    """One kernel wording: what it means for the NPU and what to do."""

    name: str
    family: str  # an NPU family, or "*" for faults around any NPU
    regex: re.Pattern[str]
    meaning: str
    action: str


@dataclass(frozen=True)
class KernelFault:
    """A kernel log line that matched a fault pattern."""

    pattern: FaultPattern
    line_no: int  # 1-based, in the text it was found in
    text: str
    timestamp: float | None
    matched: str  # the part of the line the pattern matched


def _from_catalogue() -> tuple[FaultPattern, ...]:
    """The catalogue's kernel signatures (`kernel: true`), as check 8 and npu-diagnose read them."""
    from npu_accept.diagnose import catalogue

    found = []
    for sig in catalogue.load().signatures:
        if sig.kernel:
            regex = re.compile("|".join(f"(?:{p.pattern})" for p in sig.match))
            name = sig.id.removeprefix("kernel-")
            found.append(FaultPattern(name, sig.family, regex, sig.meaning, sig.action))
    return tuple(found)


PATTERNS: tuple[FaultPattern, ...] = _from_catalogue()


def patterns_for(family: str | None) -> tuple[FaultPattern, ...]:
    """The patterns that apply to a family's board (all of them when the family is unknown)."""
    if family is None:
        return PATTERNS
    return tuple(p for p in PATTERNS if p.family in (ANY_FAMILY, family))


def timestamp(line: str) -> float | None:
    """The printk time of a dmesg line ("[   12.345678] …"), None without one."""
    match = TIMESTAMP.match(line)
    return float(match.group("seconds")) if match else None


def compile_allowlist(entries: Iterable[str]) -> tuple[re.Pattern[str], ...]:
    """Allowlist regular expressions; ValueError naming the bad one."""
    compiled = []
    for entry in entries:
        try:
            compiled.append(re.compile(entry))
        except re.error as exc:
            raise ValueError(
                f"kernel log allowlist entry '{entry}' is not a regular expression ({exc})"
            ) from None
    return tuple(compiled)


def scan(
    lines: Sequence[str], family: str | None = None, allow: Sequence[re.Pattern[str]] = ()
) -> list[KernelFault]:
    """Every line that matches a fault pattern of the family and no allowlist entry."""
    found = []
    chosen = patterns_for(family)
    for number, line in enumerate(lines, start=1):
        message = unwrap(number, line).message
        for pattern in chosen:
            match = pattern.regex.search(message)
            if match:
                if not any(a.search(line) for a in allow):
                    found.append(KernelFault(pattern, number, line.rstrip(), timestamp(line), match.group(0)))
                break
    return found

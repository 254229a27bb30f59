# SPDX-License-Identifier: MIT
"""Kernel log lines that mean the NPU (or the memory path in front of it) failed, per NPU family.

One table for both users: `npu-diagnose` reads a pasted dmesg, and check 8 (kernel log) reads the
board's `dmesg` since boot and during the run.  Every pattern is a wording the kernel itself
prints (sources in docs/PROVENANCE.md); a profile may allowlist lines it knows to be harmless.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

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


def _p(name: str, family: str, regex: str, meaning: str, action: str) -> FaultPattern:
    return FaultPattern(name, family, re.compile(regex), meaning, action)


PATTERNS: tuple[FaultPattern, ...] = (
    _p(
        "smmu-fault",
        ANY_FAMILY,
        r"arm-smmu(?:-v3)?\b.*(?:Unhandled context fault|event 0x[0-9a-fA-F]{2} received)",
        "the SMMU blocked a DMA access (an IOMMU fault)",
        "check the NPU node's iommus and its memory-region in the device tree, and that the "
        "SMMU is enabled for this silicon",
    ),
    _p(
        "iommu-page-fault",
        ANY_FAMILY,
        r"Page fault at (?:0x)?[0-9a-fA-F]+ of type (?:read|write)",
        "the NPU's IOMMU took a page fault",
        "check that the runtime and the kernel driver are from the same release and the NPU's "
        "buffers are mapped (rknpu: CONFIG_ROCKCHIP_RKNPU_DRM_GEM vs _DMA_HEAP as the runtime expects)",
    ),
    _p(
        "remoteproc-crash",
        ANY_FAMILY,
        r"remoteproc\d*: crash detected in \S+: type \S+",
        "a remote processor crashed",
        "read the lines before it and reload the firmware (echo start > /sys/class/remoteproc/*/state)",
    ),
    _p(
        "remoteproc-start",
        ANY_FAMILY,
        r"can't start rproc \S+: -?\d+",
        "a remote processor failed to start",
        "check that its firmware file matches the kernel driver (same BSP release)",
    ),
    _p(
        "firmware-load",
        ANY_FAMILY,
        r"Direct firmware load for \S+ failed with error -?\d+",
        "a firmware file could not be loaded",
        "install the firmware package of the NPU runtime (the file named on the line) in /lib/firmware",
    ),
    _p(
        "rknpu-job-timeout",
        "rknpu",
        r"RKNPU: (?:job timeout|failed to wait job|job commit failed)",
        "an RKNPU job timed out in the kernel driver",
        "match librknnrt to the driver version and check the NPU's power domain, clocks and IOMMU",
    ),
    _p(
        "cvi-tpu-timeout",
        "cvitek-tpu",
        r"run dmabuf (?:timeout|interrupted)",
        "a TPU job timed out or was interrupted in the cvi-tpu driver",
        "check that the cvimodel was compiled for this chip and that the TPU clock and reset are enabled",
    ),
)


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
        for pattern in chosen:
            match = pattern.regex.search(line)
            if match:
                if not any(a.search(line) for a in allow):
                    found.append(KernelFault(pattern, number, line.rstrip(), timestamp(line), match.group(0)))
                break
    return found

# SPDX-License-Identifier: MIT
"""Delegation lines that TFLite and vendor delegates print: the one parser of them, used on the
board (npu-run cross-checks its node counts) and on the host (the suite's checks, npu-diagnose,
through npu_accept.logparse). Standard library only: it runs on the board.

Wordings, from the runtimes themselves:
- TFLite's SimpleDelegate (tflite/delegates/utils/simple_delegate.cc, INFO level), which NXP's
  NeutronDelegate is built on: "%s delegate: %d nodes delegated out of %d nodes with %d partitions.",
  e.g. on i.MX95 "NeutronDelegate delegate: 1 nodes delegated out of 4 nodes with 1 partitions.";
  older SimpleDelegate builds end the line after "nodes", so the partitions part is optional.
- LiteRT tflite/core/subgraph.cc (libLiteRt in ai-edge-litert 2.3.0, VERBOSE level): "Replacing %d
  out of %d node(s) with delegate (%s) node, yielding %zu partitions for subgraph %d (%s)."; older
  TFLite: "Replacing %d node(s) with delegate (%s) node, yielding %zu partitions."
- XNNPACK: "Created TensorFlow Lite XNNPACK delegate for CPU."
- NXP's delegate: "Neutron delegate version: v1.0.0-f24d08e5, zerocp enabled."
"""

from __future__ import annotations

import re
from dataclasses import dataclass

VENDOR_LINE = re.compile(
    r"(?P<name>\w+) delegate: (?P<delegated>\d+) nodes delegated out of (?P<total>\d+) nodes"
    r"(?: with (?P<partitions>\d+) partitions)?"
)
TFLITE_LINE = re.compile(
    r"Replacing (?P<delegated>\d+)(?: out of (?P<total>\d+))? node\(s\) with delegate "
    r"\((?P<name>[^)]*)\) node, yielding (?P<partitions>\d+) partitions"
    r"(?: for subgraph (?P<subgraph>\d+))?"
)
XNNPACK_CREATED = re.compile(r"Created TensorFlow Lite XNNPACK delegate for CPU")
DELEGATE_VERSION = re.compile(r"(?:(?P<name>\w+) )?[Dd]elegate version:\s*(?P<version>[^\s,]+)")


@dataclass
class Delegation:
    """One delegation line: who took how many nodes of how many, in how many partitions."""

    text: str
    source: str  # "vendor" (SimpleDelegate's line) or "tflite" (the interpreter's)
    name: str
    delegated: int
    total: int | None
    partitions: int | None


DelegationLine = Delegation  # the name npu-run's code used


def _optional(value: str | None) -> int | None:
    return int(value) if value is not None else None


def delegation_lines(text: str) -> list[Delegation]:
    """Every delegation line in TEXT, in order."""
    found = []
    for line in text.splitlines():
        for source, regex in (("vendor", VENDOR_LINE), ("tflite", TFLITE_LINE)):
            match = regex.search(line)
            if match:
                found.append(
                    Delegation(
                        text=line.strip(),
                        source=source,
                        name=match.group("name"),
                        delegated=int(match.group("delegated")),
                        total=_optional(match.group("total")),
                        partitions=_optional(match.group("partitions")),
                    )
                )
                break
    return found


def delegate_version(text: str) -> str | None:
    """The version a delegate printed ("v1.0.0-f24d08e5"), None when it printed none."""
    match = DELEGATE_VERSION.search(text)
    return match.group("version") if match else None

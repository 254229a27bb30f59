# SPDX-License-Identifier: MIT
"""Delegation lines that TFLite and vendor delegates print, as the runtime writes them.

Wording read from the runtime itself: libLiteRt.so in ai-edge-litert 2.3.0 carries
"Replacing %d out of %d node(s) with delegate (%s) node, yielding %zu partitions for subgraph %d (%s).";
older TFLite prints "Replacing %d node(s) with delegate (%s) node, yielding %zu partitions.".
Delegates built on TFLite's SimpleDelegate (NXP's NeutronDelegate among them) print
"%s delegate: %d nodes delegated out of %d nodes with %d partitions." at INFO level
(tflite/delegates/utils/simple_delegate.cc), e.g. seed 000 on i.MX95:
"NeutronDelegate delegate: 1 nodes delegated out of 4 nodes with 1 partitions."
"""

from __future__ import annotations

import re
from dataclasses import dataclass

VENDOR_LINE = re.compile(
    r"(?P<name>\w+) delegate: (?P<delegated>\d+) nodes delegated out of (?P<total>\d+) nodes"
    r" with (?P<partitions>\d+) partitions"
)
TFLITE_LINE = re.compile(
    r"Replacing (?P<delegated>\d+)(?: out of (?P<total>\d+))? node\(s\) with delegate "
    r"\((?P<name>[^)]*)\) node, yielding (?P<partitions>\d+) partitions"
)
XNNPACK_CREATED = re.compile(r"Created TensorFlow Lite XNNPACK delegate for CPU")
DELEGATE_VERSION = re.compile(r"[Dd]elegate version:\s*(?P<version>[^\s,]+)")


@dataclass
class DelegationLine:
    text: str
    name: str
    delegated: int
    total: int | None
    partitions: int


def delegation_lines(text: str) -> list[DelegationLine]:
    found = []
    for line in text.splitlines():
        for regex in (VENDOR_LINE, TFLITE_LINE):
            match = regex.search(line)
            if match:
                total = match.group("total")
                found.append(
                    DelegationLine(
                        text=line.strip(),
                        name=match.group("name"),
                        delegated=int(match.group("delegated")),
                        total=int(total) if total is not None else None,
                        partitions=int(match.group("partitions")),
                    )
                )
                break
    return found


def delegate_version(text: str) -> str | None:
    match = DELEGATE_VERSION.search(text)
    return match.group("version") if match else None

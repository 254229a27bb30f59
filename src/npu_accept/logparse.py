# SPDX-License-Identifier: MIT
"""Parsers for the logs users paste and boards print: label_image runs (also verbose -v 1 dumps)
and neutron-converter --dump-statistics.

The delegation lines ("NeutronDelegate delegate: 1 nodes delegated out of 4 nodes with 1
partitions.", "Replacing N node(s) with delegate (X) node, …", the delegate's version line) have
one parser, shared with the board: npu_target.delegate_log (the on-target tools' package, installed
with this one), whose docstring cites the wordings' sources.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import sys
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING


def _board_parser() -> ModuleType:
    """npu_target.delegate_log as installed with this package; run from a checkout with only src/
    on the path, the same file from the npu-tools recipe (it needs nothing but the standard library)."""
    try:
        return importlib.import_module("npu_target.delegate_log")
    except ModuleNotFoundError as exc:
        if exc.name not in ("npu_target", "npu_target.delegate_log"):
            raise
    from npu_accept.paths import target_tools

    name = "npu_target_delegate_log"
    spec = importlib.util.spec_from_file_location(name, target_tools().package / "delegate_log.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the class is created
    spec.loader.exec_module(module)
    return module


_BOARD = _board_parser()
if TYPE_CHECKING:  # the checker reads the board's module itself (mypy_path); same names at run time
    from npu_target.delegate_log import DELEGATE_VERSION as DELEGATE_VERSION
    from npu_target.delegate_log import TFLITE_LINE as TFLITE_LINE
    from npu_target.delegate_log import VENDOR_LINE as VENDOR_LINE
    from npu_target.delegate_log import XNNPACK_CREATED as XNNPACK_CREATED
    from npu_target.delegate_log import Delegation as Delegation
else:
    DELEGATE_VERSION = _BOARD.DELEGATE_VERSION
    TFLITE_LINE = _BOARD.TFLITE_LINE
    VENDOR_LINE = _BOARD.VENDOR_LINE
    XNNPACK_CREATED = _BOARD.XNNPACK_CREATED
    Delegation = _BOARD.Delegation

LOADED_MODEL = re.compile(r"INFO: Loaded model (?P<model>\S+)")
AVERAGE_TIME = re.compile(r"INFO: average time: (?P<ms>[0-9.]+) ms")
TENSOR_DUMP = re.compile(
    r"^INFO: (?P<index>\d+): (?P<name>.+), (?P<bytes>\d+), (?P<type>\d+), (?P<scale>[-0-9.e]+), "
    r"(?P<zero_point>-?\d+)\s*$"
)
RESULT = re.compile(r"^INFO: (?P<score>\d+(?:\.\d+)?): (?P<index>\d+) (?P<label>.*)$")
NODE_LINE = re.compile(
    r"^Node (?P<index>\d+) Operator "
    r"(?:Builtin Code (?P<code>\d+) (?P<builtin>\w+)|Custom Name (?P<custom>\S+))"
    r"(?: \((?P<status>not delegated|delegated by node (?P<by>\d+))\))?\s*$"
)
EXECUTION_PLAN = re.compile(
    r"Execution plan as the list of (?P<count>\d+) nodes invoked in-order: "
    r"\[(?P<nodes>[0-9, ]*)\]"
)
DELEGATE_NODE = re.compile(
    r"Node (?P<index>\d+) is a (?P<name>\w+) node \([^)]*\), which has delegated "
    r"(?P<count>\d+) nodes: \[(?P<nodes>[0-9, -]*)\]"
)
COUNT_INFO = re.compile(
    r"^INFO: (?P<key>tensors size|nodes size|inputs|number of inputs|"
    r"number of outputs): (?P<value>\d+)"
)
NUMBER = re.compile(r"-?[0-9][0-9,]*(?:\.[0-9]+)?|-?nan|-?inf")


@dataclass
class TensorDump:
    index: int
    name: str
    bytes: int
    type_code: int
    scale: float
    zero_point: int


@dataclass
class NodeDump:
    index: int
    op: str
    custom: bool
    delegated_by: int | None
    status: str | None


@dataclass
class LabelImageLog:
    command: str | None = None
    model: str | None = None
    external_delegate_created: bool = False
    external_delegate_applied: bool = False
    xnnpack_created: bool = False
    invoked: bool = False
    average_ms: float | None = None
    delegations: list[Delegation] = field(default_factory=list)
    delegate_version: str | None = None
    counts: dict[str, int] = field(default_factory=dict)
    tensors: list[TensorDump] = field(default_factory=list)
    nodes: list[NodeDump] = field(default_factory=list)
    execution_plan: list[int] | None = None
    delegate_nodes: dict[int, list[int]] = field(default_factory=dict)
    results: list[tuple[float, int, str]] = field(default_factory=list)

    @property
    def delegated_nodes(self) -> int | None:
        """Nodes taken by the (non-XNNPACK) delegate according to its own line."""
        found = [d.delegated for d in self.delegations if "xnnpack" not in d.name.lower()]
        return sum(found) if found else None


def parse_delegations(text: str) -> list[Delegation]:
    """Every delegation line of TEXT (the board's parser, npu_target.delegate_log)."""
    found: list[Delegation] = _BOARD.delegation_lines(text)  # a ModuleType attribute is Any
    return found


def _int_list(text: str) -> list[int]:
    values: list[int] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        if "-" in part:
            low, high = part.split("-", 1)
            values.extend(range(int(low), int(high) + 1))
        else:
            values.append(int(part))
    return values


def parse_label_image(text: str) -> LabelImageLog:
    log = LabelImageLog(delegations=parse_delegations(text))
    for raw in text.splitlines():
        line = raw.strip()
        if "label_image" in line and log.command is None and " -m " in line:
            log.command = line[line.index("./label_image") if "./label_image" in line else 0 :]
        if m := LOADED_MODEL.search(line):
            log.model = m.group("model")
        elif line.startswith("INFO: EXTERNAL delegate created"):
            log.external_delegate_created = True
        elif line.startswith("INFO: Applied EXTERNAL delegate"):
            log.external_delegate_applied = True
        elif XNNPACK_CREATED.search(line):
            log.xnnpack_created = True
        elif line.startswith("INFO: invoked"):
            log.invoked = True
        elif m := AVERAGE_TIME.search(line):
            log.average_ms = float(m.group("ms"))
        elif m := DELEGATE_VERSION.search(line):
            log.delegate_version = m.group("version")
        elif m := COUNT_INFO.search(line):
            log.counts[m.group("key")] = int(m.group("value"))
        elif m := TENSOR_DUMP.match(line):
            log.tensors.append(
                TensorDump(
                    int(m.group("index")),
                    m.group("name"),
                    int(m.group("bytes")),
                    int(m.group("type")),
                    float(m.group("scale")),
                    int(m.group("zero_point")),
                )
            )
        elif m := NODE_LINE.match(line):
            custom = m.group("custom")
            by = m.group("by")
            log.nodes.append(
                NodeDump(
                    int(m.group("index")),
                    custom or m.group("builtin"),
                    bool(custom),
                    int(by) if by else None,
                    m.group("status"),
                )
            )
        elif m := EXECUTION_PLAN.search(line):
            log.execution_plan = _int_list(m.group("nodes"))
        elif m := DELEGATE_NODE.search(line):
            log.delegate_nodes[int(m.group("index"))] = _int_list(m.group("nodes"))
        elif m := RESULT.match(line):
            log.results.append((float(m.group("score")), int(m.group("index")), m.group("label")))
    return log


@dataclass
class NeutronGraphStats:
    name: str
    neutron_operators: int | None = None
    builtin_operators: int | None = None
    memory_bytes: dict[str, int] = field(default_factory=dict)
    cycles: int | None = None
    latency_ms: float | None = None


@dataclass
class ConverterStats:
    command: str | None = None
    target: str | None = None
    graphs: list[NeutronGraphStats] = field(default_factory=list)
    overall: dict[str, float] = field(default_factory=dict)
    converted_operators: list[int] = field(default_factory=list)
    conversion_seconds: dict[str, float] = field(default_factory=dict)
    estimates: dict[str, float | None] = field(default_factory=dict)

    @property
    def conversion_ratio(self) -> float | None:
        return self.overall.get("Operator conversion ratio")


def _number(text: str) -> float | None:
    match = NUMBER.search(text)
    if match is None:
        return None
    token = match.group(0).replace(",", "")
    if "nan" in token:
        return None
    return float(token)


def parse_converter_statistics(text: str) -> ConverterStats:
    """neutron-converter --dump-statistics output (per-NeutronGraph and overall sections)."""
    stats = ConverterStats()
    section = "estimates"
    graph: NeutronGraphStats | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if "neutron-converter" in line:
            stats.command = line
            target = re.search(r"--target (\S+)", line)
            stats.target = target.group(1) if target else None
            continue
        if m := re.match(r'Statistics for NeutronGraph "(?P<name>[^"]*)":', line):
            graph = NeutronGraphStats(m.group("name"))
            stats.graphs.append(graph)
            section = "graph"
            continue
        if line.startswith("Overall statistics for graph"):
            section, graph = "overall", None
            continue
        if line.startswith("Conversion time:"):
            section = "time"
            continue
        key, sep, value = line.partition("=") if "=" in line else line.partition(":")
        if not sep:
            continue
        key, value = key.strip(), value.strip()
        if section == "estimates":
            stats.estimates[key] = _number(value)
        elif section == "graph" and graph is not None:
            if key == "Number of Neutron operators":
                graph.neutron_operators = int(_number(value) or 0)
            elif key == "Number of builtin operators":
                graph.builtin_operators = int(_number(value) or 0)
            elif key == "Cycle estimation":
                graph.cycles = int(_number(value) or 0)
            elif key == "Latency estimation":
                graph.latency_ms = _number(value)
            elif "(bytes)" in value:
                graph.memory_bytes[key] = int(_number(value) or 0)
        elif section == "overall":
            if key == "Operators converted":
                stats.converted_operators = _int_list(value)
            elif key == "Operator conversion ratio":
                ratio = value.split("=")[-1]
                stats.overall[key] = float(_number(ratio) or 0.0)
            elif (number := _number(value)) is not None:
                stats.overall[key] = number
        elif section == "time" and (number := _number(value)) is not None:
            stats.conversion_seconds[key] = number
    return stats

# SPDX-License-Identifier: MIT
"""Log parsers on the real text: the A0 field report's label_image logs and neutron-converter
statistics, and the TFLite delegation line as the installed runtime's own format string prints it."""

from __future__ import annotations

import re
from pathlib import Path

import ai_edge_litert
import pytest

from npu_accept import logparse

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "imx95-a0-field-report"


def _text(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def test_label_image_delegate_run() -> None:
    log = logparse.parse_label_image(_text("label_image_delegate.log"))
    assert log.model == "mobilenet_v1_1.0_224_quant.tflite"
    assert log.command.endswith("--external_delegate_path=/usr/lib/libneutron_delegate.so")
    assert log.external_delegate_created and log.external_delegate_applied
    assert log.xnnpack_created and log.invoked
    assert log.average_ms == 0.37
    assert log.delegate_version == "v1.0.0-f24d08e5"
    (line,) = log.delegations
    assert (line.source, line.name, line.delegated, line.total, line.partitions) == (
        "vendor",
        "NeutronDelegate",
        1,
        4,
        1,
    )
    assert log.delegated_nodes == 1
    assert log.results == []  # the user's complaint: no classification printed


def test_label_image_verbose_dump() -> None:
    log = logparse.parse_label_image(_text("label_image_verbose.log"))
    assert log.model == "demo_converted"
    assert log.counts["tensors size"] == 11 and log.counts["nodes size"] == 4
    assert len(log.tensors) == 11
    assert log.tensors[2] == logparse.TensorDump(2, "input", 150528, 3, 0.0078125, 128)
    assert log.tensors[0].zero_point == -62 and log.tensors[5].name == "NeutronMicrocode"
    assert [(n.index, n.op, n.delegated_by) for n in log.nodes] == [
        (0, "QUANTIZE", None),
        (1, "NeutronGraph", 4),
        (2, "SOFTMAX", None),
        (3, "QUANTIZE", None),
        (4, "NeutronDelegate", None),
    ]
    assert log.execution_plan == [0, 4, 2, 3]
    assert log.delegate_nodes == {4: [1]}
    assert log.average_ms == 0.326
    assert log.delegated_nodes == 1


def test_converter_statistics() -> None:
    stats = logparse.parse_converter_statistics(_text("neutron_converter_statistics.txt"))
    assert stats.target == "imx95"
    (graph,) = stats.graphs
    assert graph.name == "subgraph_030"
    assert (graph.neutron_operators, graph.builtin_operators) == (29, 44)
    assert graph.memory_bytes["Weights"] == 4329648 and graph.memory_bytes["Total size"] == 5278033
    assert graph.cycles == 1066681 and graph.latency_ms == 1.067
    assert stats.overall["Number of operators total"] == 47
    assert stats.overall["Number of operators NOT converted"] == 3
    assert stats.conversion_ratio == pytest.approx(0.93617)
    assert stats.converted_operators == list(range(1, 45))
    assert stats.conversion_seconds["Total"] == pytest.approx(7.59489)
    assert stats.estimates["Latency per inference"] is None  # "-nan ms" in the real output


def _runtime_format_string() -> str:
    """The delegation message exactly as compiled into the installed libLiteRt.so."""
    lib = Path(ai_edge_litert.__file__).with_name("libLiteRt.so").read_bytes()
    match = re.search(rb"Replacing %d out of %d node\(s\)[^\x00]*", lib)
    assert match, "libLiteRt.so no longer carries the delegation message; update logparse"
    return match.group(0).decode()


def test_tflite_line_from_the_runtime_format_string() -> None:
    fmt = _runtime_format_string()
    line = "INFO: " + fmt.replace("%zu", "%d") % (160, 164, "TfLiteXNNPackDelegate", 2, 0, "main")
    (parsed,) = logparse.parse_delegations(line)
    assert (parsed.source, parsed.name, parsed.delegated, parsed.total, parsed.partitions) == (
        "tflite",
        "TfLiteXNNPackDelegate",
        160,
        164,
        2,
    )


def test_tflite_line_old_wording() -> None:
    # tensorflow/lite/core/subgraph.cc before LiteRT: "Replacing %d node(s) with delegate (%s) node,
    # yielding %zu partitions."
    text = "INFO: Replacing 31 node(s) with delegate (TfLiteNnapiDelegate) node, yielding 1 partitions.\n"
    (parsed,) = logparse.parse_delegations(text)
    assert (parsed.delegated, parsed.total, parsed.partitions, parsed.name) == (
        31,
        None,
        1,
        "TfLiteNnapiDelegate",
    )


def test_unrelated_text_gives_nothing() -> None:
    assert logparse.parse_delegations("INFO: invoked\nINFO: average time: 0.3 ms\n") == []
    empty = logparse.parse_label_image("")
    assert empty.delegated_nodes is None and empty.average_ms is None


def test_board_parser_reads_a_vendor_line_without_partitions_like_the_host() -> None:
    """Host and board share one delegation-line parser (npu_target.delegate_log): a SimpleDelegate
    line that ends after "nodes" and the delegate's version line read the same on both sides."""
    from npu_target import delegate_log
    from npu_tools import TOOLS_DIR  # noqa: F401 (puts the on-target package on sys.path)

    assert logparse.VENDOR_LINE is delegate_log.VENDOR_LINE  # one parser, not two copies
    assert logparse.DELEGATE_VERSION is delegate_log.DELEGATE_VERSION
    line = "INFO: NeutronDelegate delegate: 3 nodes delegated out of 7 nodes"
    (board,) = delegate_log.delegation_lines(line)
    (host,) = logparse.parse_delegations(line)
    assert (board.name, board.delegated, board.total, board.partitions) == ("NeutronDelegate", 3, 7, None)
    assert (host.name, host.delegated, host.total, host.partitions) == ("NeutronDelegate", 3, 7, None)
    version = "INFO: Neutron delegate version: v1.0.0-f24d08e5, zerocp enabled."
    assert delegate_log.delegate_version(version) == "v1.0.0-f24d08e5"
    assert logparse.DELEGATE_VERSION.search(version).group("version") == "v1.0.0-f24d08e5"

# SPDX-License-Identifier: MIT
"""Make the twin's "Neutron-converted" model: RESHAPE nodes rewritten into custom op "NeutronGraph".

A real neutron-converter replaces most of a graph with one NeutronGraph custom op that only the
NPU delegate can run. The twin does the same on a real model with the TFLite flatbuffer object API:
the chosen RESHAPE nodes keep their data input and output but become NeutronGraph, so the CPU
alone can no longer run the model (unresolved custom op) while the twin delegate computes them
exactly (a RESHAPE is a byte copy). By default the RESHAPEs feeding the model's output
CONCATENATIONs are converted, so a faulty NPU ruins every output row (the pattern of the i.MX95
A0 field report).
"""

from __future__ import annotations

from pathlib import Path

import flatbuffers
from ai_edge_litert import schema_py_generated as schema

CUSTOM_OP = "NeutronGraph"
RESHAPE = schema.BuiltinOperator.RESHAPE
CONCATENATION = schema.BuiltinOperator.CONCATENATION
CUSTOM = schema.BuiltinOperator.CUSTOM


def _builtin(code: schema.OperatorCodeT) -> int:
    code_value: int = max(code.builtinCode, code.deprecatedBuiltinCode)  # the generated schema is untyped
    return code_value


def output_reshapes(model: schema.ModelT) -> list[int]:
    """Indices (subgraph 0) of RESHAPE ops whose result goes into a CONCATENATION producing an output."""
    graph = model.subgraphs[0]
    outputs = {int(t) for t in graph.outputs}
    ops = graph.operators
    concat_inputs: set[int] = set()
    for op in ops:
        if _builtin(model.operatorCodes[op.opcodeIndex]) == CONCATENATION and int(op.outputs[0]) in outputs:
            concat_inputs.update(int(t) for t in op.inputs)
    return [
        i
        for i, op in enumerate(ops)
        if _builtin(model.operatorCodes[op.opcodeIndex]) == RESHAPE and int(op.outputs[0]) in concat_inputs
    ]


def convert(source: Path, target: Path, op_indices: list[int] | None = None) -> list[int]:
    """Write target with the given (default: output_reshapes) RESHAPE ops as NeutronGraph; returns them."""
    model = schema.ModelT.InitFromPackedBuf(bytearray(source.read_bytes()), 0)
    chosen = output_reshapes(model) if op_indices is None else list(op_indices)
    if not chosen:
        raise ValueError(f"{source} has no RESHAPE op to convert")
    code = schema.OperatorCodeT()
    code.builtinCode = CUSTOM
    code.deprecatedBuiltinCode = CUSTOM
    code.customCode = CUSTOM_OP
    code.version = 1
    model.operatorCodes.append(code)
    custom_index = len(model.operatorCodes) - 1
    for index in chosen:
        op = model.subgraphs[0].operators[index]
        if _builtin(model.operatorCodes[op.opcodeIndex]) != RESHAPE:
            raise ValueError(f"op {index} of {source} is not a RESHAPE")
        op.opcodeIndex = custom_index
        op.inputs = [op.inputs[0]]
        op.builtinOptionsType = schema.BuiltinOptions.NONE
        op.builtinOptions = None
        op.customOptions = None
    builder = flatbuffers.Builder(len(source.read_bytes()) + 1024)
    builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    target.write_bytes(bytes(builder.Output()))
    return chosen

# SPDX-License-Identifier: MIT
"""Check 4 — The delegate loads, offloads nodes of an NPU-converted model, invoke succeeds, XNNPACK did
not take the graph."""


def test_delegate(judge):
    judge("delegate")

# SPDX-License-Identifier: MIT
"""Check 5 — The same input through NPU and CPU (and golden references) gives matching, non-degenerate
outputs."""


def test_outputs(judge):
    judge("outputs")

# SPDX-License-Identifier: MIT
"""Check 6 — SRAM / NPU memory pools present and large enough."""


def test_memory(judge):
    judge("memory")

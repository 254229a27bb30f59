# SPDX-License-Identifier: MIT
"""Check 2 — The SoC is the profile's, in a silicon revision the NPU stack supports (i.MX95: B0 only)."""


def test_silicon(judge):
    judge("silicon")

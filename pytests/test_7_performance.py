# SPDX-License-Identifier: MIT
"""Check 7 — p50/p99 latency, NPU/CPU speedup at least the profile minimum, no regression against
--baseline."""


def test_performance(judge):
    judge("performance")

# SPDX-License-Identifier: MIT
"""Check 3 — NPU runtime and daemon present, running, versions matching; the delegate library present
and loadable."""


def test_runtime(judge):
    judge("runtime")

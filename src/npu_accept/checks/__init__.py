# SPDX-License-Identifier: MIT
"""The seven acceptance checks as pure functions of a board's facts.

    from npu_accept.checks import run_all, root_cause
    results = run_all(facts, profile)        # {"driver": CheckResult, …} in check order
    sentence = root_cause(results)           # None when nothing failed

One module per check (driver, silicon, runtime, delegate, outputs, memory, performance); each
exports `IMPLEMENTS = {(check, family): function}` (family "*" = any).  A new NPU family adds its
own module with its entries; see `registry`.  The pytest plugin and the oeqa bridge call the same
functions.
"""

from npu_accept.checks.base import CHECK_ORDER, CHECK_TITLES, FAIL, PASS, SKIP, CheckResult
from npu_accept.checks.registry import implementation, run_all, run_check
from npu_accept.checks.summary import root_cause

__all__ = [
    "CHECK_ORDER",
    "CHECK_TITLES",
    "FAIL",
    "PASS",
    "SKIP",
    "CheckResult",
    "implementation",
    "root_cause",
    "run_all",
    "run_check",
]

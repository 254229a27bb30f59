# SPDX-License-Identifier: MIT
"""The acceptance checks as pure functions of a board's facts.

    from npu_accept.checks import run_all, root_cause
    results = run_all(facts, profile)        # {"driver": CheckResult, …} in check order
    sentence = root_cause(results)           # None when nothing failed

One module per check (driver, silicon, runtime, delegate, outputs, memory, performance,
kernel_log, determinism, pairing); each exports `IMPLEMENTS = {(check, family): function}` (family
"*" = any).  A family's own judges live in its package (`npu_accept.families.<family>.checks`, a
module or a package of them); see `registry`.  The checks do
no I/O: what they need from the board beyond npu-info and the model runs is gathered by collectors
(`npu_accept.collectors`, named in a module's `COLLECTORS`).  The pytest plugin and the oeqa bridge
call the same functions.
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

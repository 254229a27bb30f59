# SPDX-License-Identifier: MIT
"""Check 3 for the RKNPU family: everything the family-independent runtime check proves, plus —
when the profile sets `daemon.restart_check: true` — that rknn_server is restarted by its
supervisor after being killed (meta-npu's rknn-server.service has Restart=on-failure; its
sysvinit script runs the vendor's restart loop).

The collector (`npu_accept.daemon_restart.collect_daemon_restart`) kills the daemon over the
transport after the model runs; this check only judges the recorded probe.
"""

from __future__ import annotations

from npu_accept.checks.base import CheckResult, failed, passed
from npu_accept.checks.runtime import CHECK, check_runtime
from npu_accept.daemon_restart import FACT_KEY, collect_daemon_restart, restart_settings
from npu_accept.facts import BoardFacts
from npu_accept.profile import Profile


def check_rknpu_runtime(facts: BoardFacts, profile: Profile) -> CheckResult:
    base = check_runtime(facts, profile)
    wanted, name, timeout = restart_settings(profile)
    if not base.passed or not wanted:
        return base
    probe = facts.extra.get(FACT_KEY)
    if not isinstance(probe, dict):
        return failed(
            CHECK,
            f"Whether {name} is restarted after being killed was not probed; run the suite over "
            "SSH (npu_accept.collect) so the daemon can be killed and watched.",
            "daemon-restart-unknown",
        )
    if probe.get("error"):
        return failed(
            CHECK,
            f"{name} could not be killed to test its supervisor ({probe['error']}); run the suite "
            "as root on the board.",
            "daemon-restart-probe",
        )
    if not probe.get("restarted"):
        return failed(
            CHECK,
            f"{name} was killed and not restarted within {timeout:g} s: enable rknn-server.service "
            "(Restart=on-failure) or its init script.",
            "daemon-not-supervised",
            old_pids=probe.get("old_pids"),
        )
    old = ", ".join(str(p) for p in probe.get("old_pids") or [])
    new = ", ".join(str(p) for p in probe.get("new_pids") or [])
    return passed(
        CHECK,
        f"{base.message.rstrip('.')}; {name} (PID {old}) was killed and its supervisor restarted it "
        f"as PID {new} in {float(probe.get('waited_s') or 0):.1f} s.",
        old_pids=probe.get("old_pids"),
        new_pids=probe.get("new_pids"),
        waited_s=probe.get("waited_s"),
    )


IMPLEMENTS = {(CHECK, "rknpu"): check_rknpu_runtime}
COLLECTORS = {"rknpu": collect_daemon_restart}

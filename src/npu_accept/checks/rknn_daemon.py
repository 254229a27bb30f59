# SPDX-License-Identifier: MIT
"""Check 3 for the RKNPU family: everything the family-independent runtime check proves, plus —
when the profile sets `daemon.restart_check: true` — that rknn_server is restarted by its
supervisor after being killed (meta-npu's rknn-server.service has Restart=on-failure; its
sysvinit script runs the vendor's restart loop).

The collector kills the daemon over the transport after the model runs
(`npu_accept.daemon_restart`); the check judges the recorded probe.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from npu_accept.checks.base import CheckResult, failed, passed
from npu_accept.checks.runtime import CHECK, check_runtime
from npu_accept.daemon_restart import DEFAULT_TIMEOUT_S, probe_restart
from npu_accept.facts import BoardFacts
from npu_accept.profile import Profile
from npu_accept.transport import CommandTimeout

FACT_KEY = "daemon_restart"


def _restart_settings(profile: Profile) -> tuple[bool, str, float]:
    daemon = profile.daemon or {}
    name = str(daemon.get("name") or "rknn_server")
    timeout = float(daemon.get("restart_timeout_s", DEFAULT_TIMEOUT_S))
    return bool(daemon.get("restart_check")), name, timeout


def collect_daemon_restart(
    connection: Any, remote_dir: str, facts: BoardFacts, profile: Profile, artifacts: Path
) -> dict[str, Any]:
    """Kill the daemon and wait for its supervisor to restart it (only if the profile asks)."""
    wanted, name, timeout = _restart_settings(profile)
    if not wanted or facts.info is None:
        return {}
    try:
        record = probe_restart(connection, name, timeout).as_dict()
    except CommandTimeout as exc:
        record = {
            "name": name,
            "restarted": False,
            "old_pids": [],
            "new_pids": [],
            "waited_s": 0.0,
            "timeout_s": timeout,
            "error": f"a probe command timed out ({exc})",
        }
    (artifacts / "daemon-restart.json").write_text(json.dumps(record, indent=2) + "\n")
    return {FACT_KEY: record}


def check_rknpu_runtime(facts: BoardFacts, profile: Profile) -> CheckResult:
    base = check_runtime(facts, profile)
    wanted, name, timeout = _restart_settings(profile)
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

# SPDX-License-Identifier: MIT
"""Probe whether a board's NPU daemon is restarted by its supervisor: list its PIDs, SIGKILL them
over the transport, poll until a process of the same name with a new PID appears or the profile's
time is up.

meta-npu installs rknn_server with a systemd unit (Restart=on-failure) and a sysvinit script, so
on a good image a killed rknn_server comes back within a second. The PIDs are read from
/proc/<pid>/comm with plain POSIX sh (no pidof needed on the image); zombies do not count.

Where no supervisor restarts it, the verdict says so and the suite starts the daemon again itself
(the profile's `daemon.path`, in a session of its own), so the board is not left without it.
Before the kill the board records what is killed (KILLED_PATH); a run that dies before the daemon
is back leaves the record, and the next run starts the daemon again before it examines the board
(`recovery_sh`, run under the board lock).
"""

from __future__ import annotations

import json
import shlex
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from npu_accept.artifacts import keep
from npu_accept.boardlink import BoardLink, run_bounded
from npu_accept.transport import CommandTimeout

DEFAULT_TIMEOUT_S = 10.0
POLL_INTERVAL_S = 0.2
COMMAND_TIMEOUT_S = 30.0
FACT_KEY = "daemon_restart"
# "name\npath" of a daemon the probe killed and that is not known to be back yet.
KILLED_PATH = "/tmp/npu-accept-daemon.killed"


@dataclass
class RestartProbe:
    """What happened when the daemon was killed."""

    name: str
    restarted: bool
    old_pids: list[int] = field(default_factory=list)
    new_pids: list[int] = field(default_factory=list)
    waited_s: float = 0.0
    timeout_s: float = DEFAULT_TIMEOUT_S
    error: str | None = None  # the probe could not run (daemon not running, kill refused)
    restarted_by_suite: bool | None = None  # no supervisor did: the suite started it again
    suite_pids: list[int] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def pids_command(name: str) -> str:
    """A POSIX sh command printing the PIDs of live (non-zombie) processes whose comm is NAME."""
    comm = shlex.quote(name[:15])  # the kernel truncates comm to 15 characters
    return (
        "for d in /proc/[0-9]*; do "
        f'[ "$(cat "$d/comm" 2>/dev/null)" = {comm} ] || continue; '
        's=$(cat "$d/stat" 2>/dev/null) || continue; s=${s##*) }; '
        '[ "${s%% *}" = Z ] || echo "${d#/proc/}"; '
        "done"
    )


def daemon_pids(link: BoardLink, name: str) -> list[int]:
    result = run_bounded(link, pids_command(name), COMMAND_TIMEOUT_S)
    text = result.stdout.decode(errors="replace") if isinstance(result.stdout, bytes) else str(result.stdout)
    return sorted(int(word) for word in text.split() if word.isdigit())


def probe_restart(
    link: BoardLink, name: str, timeout_s: float = DEFAULT_TIMEOUT_S, poll_s: float = POLL_INTERVAL_S
) -> RestartProbe:
    """Kill every NAME process with SIGKILL and wait up to TIMEOUT_S for a new one."""
    old = daemon_pids(link, name)
    probe = RestartProbe(name=name, restarted=False, old_pids=old, timeout_s=timeout_s)
    if not old:
        probe.error = f"{name} was not running, so there was nothing to kill"
        return probe
    kill = run_bounded(link, "kill -9 " + " ".join(str(p) for p in old), COMMAND_TIMEOUT_S)
    if kill.exit_code != 0:
        detail = kill.stderr.decode(errors="replace").strip() if isinstance(kill.stderr, bytes) else ""
        probe.error = f"kill -9 {' '.join(map(str, old))} failed with status {kill.exit_code}" + (
            f" ({detail.splitlines()[-1]})" if detail else ""
        )
        return probe
    started = time.monotonic()
    while True:
        now = daemon_pids(link, name)
        probe.waited_s = round(time.monotonic() - started, 3)
        probe.new_pids = [p for p in now if p not in old]
        if probe.new_pids:
            probe.restarted = True
            return probe
        if probe.waited_s >= timeout_s:
            return probe
        time.sleep(poll_s)


def _start_command(path: str) -> str:
    quoted = shlex.quote(path)
    return (
        f"cd / && if command -v setsid >/dev/null; then setsid {quoted} </dev/null >/dev/null 2>&1 & "
        f"else nohup {quoted} </dev/null >/dev/null 2>&1 & fi; true"
    )


def note_kill(link: BoardLink, name: str, path: str | None) -> None:
    """Record on the board what is about to be killed (its comm name, as the kernel cuts it)."""
    run_bounded(
        link,
        f"printf '%s\\n%s\\n' {shlex.quote(name[:15])} {shlex.quote(path or '')} > {KILLED_PATH}",
        COMMAND_TIMEOUT_S,
    )


def forget_kill(link: BoardLink) -> None:
    run_bounded(link, f"rm -f {KILLED_PATH}", COMMAND_TIMEOUT_S)


def recovery_sh() -> str:
    """Board-side shell: start the daemon a killed run recorded (KILLED_PATH) if it is not
    running, then drop the record. Run under the board lock before anything looks at the board."""
    k = shlex.quote(KILLED_PATH)
    return (
        f"if [ -f {k} ]; then {{ read -r dn; read -r dp; }} < {k}; dup=0; "
        'for dd in /proc/[0-9]*; do [ "$(cat "$dd/comm" 2>/dev/null)" = "$dn" ] && dup=1; done; '
        # "&" on the start alone: a backgrounded "cd / && …" list would keep a shell holding the
        # channel open until the daemon ends
        'case "$dp" in /*) if [ "$dup" = 0 ] && [ -x "$dp" ]; then cd /; '
        'if command -v setsid >/dev/null; then setsid "$dp" </dev/null >/dev/null 2>&1 & '
        'else nohup "$dp" </dev/null >/dev/null 2>&1 & fi; fi;; esac; '
        f"rm -f {k}; fi"
    )


def start_daemon(link: BoardLink, probe: RestartProbe, path: str | None) -> None:
    """Start the daemon the probe killed and no supervisor restarted (`path` in its own session,
    stdio on /dev/null, so it outlives the SSH channel); record whether it runs again."""
    if probe.restarted or probe.error or not probe.old_pids:
        return
    probe.restarted_by_suite = False
    if not path:
        return
    run_bounded(link, _start_command(path), COMMAND_TIMEOUT_S)
    deadline = time.monotonic() + 5.0
    while time.monotonic() < deadline:
        probe.suite_pids = daemon_pids(link, probe.name)
        if probe.suite_pids:
            probe.restarted_by_suite = True
            return
        time.sleep(POLL_INTERVAL_S)


def restart_settings(profile: Any) -> tuple[bool, str, float]:
    """(probe wanted, daemon name, restart timeout) from the profile's `daemon` section."""
    daemon = profile.daemon or {}
    name = str(daemon.get("name") or "rknn_server")
    timeout = float(daemon.get("restart_timeout_s", DEFAULT_TIMEOUT_S))
    return bool(daemon.get("restart_check")), name, timeout


def collect_daemon_restart(
    connection: Any, remote_dir: str, facts: Any, profile: Any, artifacts: Path
) -> dict[str, Any]:
    """Kill the daemon and wait for its supervisor to restart it (only if the profile asks)."""
    wanted, name, timeout = restart_settings(profile)
    if not wanted or facts.info is None:
        return {}
    path = (profile.daemon or {}).get("path")
    try:
        note_kill(connection, name, path)
        probe = probe_restart(connection, name, timeout)
        start_daemon(connection, probe, path)
        forget_kill(connection)  # back (or never killed): nothing for the next run to do
        record = probe.as_dict()
    except CommandTimeout as exc:
        record = RestartProbe(
            name, False, timeout_s=timeout, error=f"a probe command timed out ({exc})"
        ).as_dict()
    keep(artifacts / "daemon-restart.json", json.dumps(record, indent=2) + "\n")
    return {FACT_KEY: record}

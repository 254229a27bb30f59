# SPDX-License-Identifier: MIT
"""Performance measured with the NPU and CPU frequency governors pinned to "performance", and put
back afterwards whatever happens (RKNN SDK v2.3.2 user guide 8.1.1: fix the CPU, DDR and NPU
frequencies before measuring, e.g. `echo performance | tee $(find /sys/ -name *governor)`).

The governors are the NPU's devfreq (`/sys/class/devfreq/*npu*/governor`) and every CPU policy
(`/sys/devices/system/cpu/cpufreq/policy*/scaling_governor`). Their values are read first and
recorded on the board (SAVED_PATH) before anything is pinned, pinned for the runs and written
back in a `finally`; the board's record is removed once every value reads back as it was. A run
that died while pinned (SIGKILL, a lost host) leaves the record: the next run writes those
values back first and takes them as the originals, never its predecessor's pinned ones. The
record says what was pinned, what was recovered and whether every value read back as it was.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from npu_accept.artifacts import keep
from npu_accept.collectors.board import run_bounded, upload_inputs
from npu_accept.transport import CommandTimeout, TransportError

FACT_KEY = "pinned_performance"
PINNED = "performance"
GOVERNOR_GLOBS = (
    "/sys/class/devfreq/*npu*/governor",
    "/sys/devices/system/cpu/cpufreq/policy*/scaling_governor",
)
TIMEOUT_S = 30.0
RUN_TIMEOUT_S = 600.0
# The original values while they are pinned, "path=value" lines; outlives the run's temp dir.
SAVED_PATH = "/tmp/npu-accept-governors.saved"


def _parse(text: str) -> dict[str, str]:
    found = {}
    for line in text.splitlines():
        path, sep, value = line.partition("=")
        if sep and path.startswith("/sys/") and "\n" not in value:
            found[path] = value.strip()
    return found


def _text(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value or "")


def read_saved(link: Any) -> dict[str, str]:
    """The originals an earlier run recorded on the board and did not restore ({} if none)."""
    result = run_bounded(link, f"cat {shlex.quote(SAVED_PATH)} 2>/dev/null; true", TIMEOUT_S)
    return _parse(_text(result.stdout))


def save(link: Any, values: dict[str, str]) -> bool:
    """Record the originals on the board (temp file, then rename); False if it could not."""
    lines = "".join(f"{p}={v}\n" for p, v in values.items())
    saved = shlex.quote(SAVED_PATH)
    script = f"printf %s {shlex.quote(lines)} > {saved}.tmp && mv -f {saved}.tmp {saved}"
    result = run_bounded(link, script, TIMEOUT_S)
    if result.exit_code != 0:
        run_bounded(link, f"rm -f {saved}.tmp", TIMEOUT_S)
    saved_all: bool = result.exit_code == 0
    return saved_all


def recovery_sh() -> str:
    """Board-side shell: write back the originals a killed run recorded, then drop the record
    (kept if a value could not be written back). Run under the board lock before anything else."""
    saved = shlex.quote(SAVED_PATH)
    return (
        f"if [ -f {saved} ]; then gok=1; while IFS= read -r gl; do gp=${{gl%%=*}}; gv=${{gl#*=}}; "
        'case "$gp" in /sys/*) [ -f "$gp" ] && { echo "$gv" > "$gp" || gok=0; } 2>/dev/null;; esac; '
        f"done < {saved}; [ $gok = 1 ] && rm -f {saved}; fi"
    )


def forget(link: Any) -> None:
    run_bounded(link, f"rm -f {shlex.quote(SAVED_PATH)}", TIMEOUT_S)


def read_governors(link: Any) -> dict[str, str]:
    """{path: governor} of every governor file the board has."""
    script = (
        "for f in "
        + " ".join(GOVERNOR_GLOBS)
        + '; do [ -f "$f" ] && printf "%s=%s\\n" "$f" "$(cat "$f")"; done; true'
    )
    return _parse(_text(run_bounded(link, script, TIMEOUT_S).stdout))


def write_governors(link: Any, values: dict[str, str]) -> list[str]:
    """Write each value; the paths whose write failed."""
    failed = []
    for path, value in values.items():
        result = run_bounded(link, f"echo {shlex.quote(value)} > {shlex.quote(path)}", TIMEOUT_S)
        if result.exit_code != 0:
            failed.append(path)
    return failed


@contextmanager
def pinned(link: Any, record: dict[str, Any]) -> Iterator[dict[str, str]]:
    """Pin every governor to "performance" for the block; restore them after it, also when it
    raises. The originals are recorded on the board first (an earlier run's record, if one was
    left, is restored and kept as the originals); nothing is pinned if they cannot be recorded."""
    recovered = read_saved(link)
    if recovered:
        write_governors(link, recovered)
    before = {**read_governors(link), **recovered}
    record.update(governors=before, pinned=[], restored=None, not_restored=[], recovered=sorted(recovered))
    if not save(link, before):
        record["not_pinned"] = (
            f"the original governors could not be recorded in {SAVED_PATH} (board /tmp full?)"
        )
        yield before
        return
    try:
        record["pinned"] = [
            p for p in before if p not in write_governors(link, dict.fromkeys(before, PINNED))
        ]
        yield before
    finally:
        write_governors(link, before)
        after = read_governors(link)
        record["not_restored"] = [p for p, v in before.items() if after.get(p) != v]
        record["restored"] = not record["not_restored"]
        if record["restored"]:
            forget(link)


def collect_pinned_performance(
    connection: Any, remote_dir: str, facts: Any, profile: Any, artifacts: Path
) -> dict[str, Any]:
    """Run each profile model on the NPU once more, `performance.runs` times, governors pinned."""
    record: dict[str, Any] = {"models": {}, "error": None}
    try:
        with pinned(connection, record):
            for spec in profile.models:
                record["models"][spec.name] = _timed_run(connection, remote_dir, spec, profile)
    except (CommandTimeout, TransportError) as exc:
        record["error"] = str(exc)
    keep(artifacts / "pinned-performance.json", json.dumps(record, indent=1) + "\n")
    return {FACT_KEY: record}


def _timed_run(connection: Any, remote_dir: str, spec: Any, profile: Any) -> dict[str, Any]:
    remote = f"{remote_dir}/pinned/{spec.name}"
    try:
        inputs = upload_inputs(connection, remote_dir, f"pinned/{spec.name}", spec)
    except RuntimeError as exc:
        return {"latency_ms": [], "error": str(exc)}
    argv = ["python3", f"{remote_dir}/npu-run", "--model", spec.path, "--input", *inputs]
    argv += ["--output-dir", f"{remote}/out", "--backend", spec.backend]
    argv += ["--runs", str(profile.performance.runs), "--warmup", str(profile.performance.warmup), "--json"]
    result = run_bounded(connection, " ".join(shlex.quote(a) for a in argv), RUN_TIMEOUT_S)
    try:
        report = json.loads(result.stdout)
    except ValueError:
        report = None
    if result.exit_code != 0 or not isinstance(report, dict):
        tail = result.stderr.decode("utf-8", "replace").strip().splitlines() if result.stderr else []
        detail = f" ({tail[-1][:200]})" if tail else ""
        return {"latency_ms": [], "error": f"npu-run exited with status {result.exit_code}{detail}"}
    return {"latency_ms": [float(x) for x in report.get("latency_ms") or []], "error": None}

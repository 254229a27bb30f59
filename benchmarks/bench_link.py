#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Benchmark: the acceptance suite over a slow link — round trips per board run, and wall time over
a 40 ms round-trip link against loopback (one healthy i.MX95 twin).

    python3 benchmarks/bench_link.py [--rtt-ms 40] [--repeat 2] [--public-api]

The slow link is benchmarks/delay_proxy.py on loopback (no netem here): every byte is delayed by
half the round trip in each direction, and the proxy counts the round trips the suite waited for
(plus one for the TCP handshake, which it cannot delay). Goals (issue 14): round trips per board
run <= 25, examination wall time over 40 ms <= 2x loopback. Every figure is printed beside its
baseline, with the load average. With --public-api the slow link is measured a second time with
paramiko's public API only (benchmarks/public_paramiko.py: open_session and exec_command, each
waiting for its answer, instead of the transport's channel opened ahead and unanswered exec
request), to show what the private-API use buys. Needs root, like the tests.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

BENCH = Path(__file__).resolve().parent
TESTS = BENCH.parent / "tests"
sys.path[:0] = [str(TESTS), str(TESTS.parent / "src"), str(BENCH)]

from delay_proxy import DelayProxy  # noqa: E402
from twins.boards_run import SuiteRun, run_suite  # noqa: E402

from npu_accept.sim.harness import Twin, TwinError, start_twin  # noqa: E402
from npu_accept.sim.imx95 import HEALTHY, imx95_assets, imx95_spec, imx95_twin_profile  # noqa: E402


def _examined(run: SuiteRun, target: str) -> tuple[float, dict[str, float]]:
    board = run.artifacts / target.replace("@", "_").replace(":", "_")
    timings = json.loads((board / "timings.json").read_text())
    return sum(timings.values()), timings


def _suite(twin: Twin, port: int, work: Path, profile: Path, public: bool = False) -> tuple[SuiteRun, str]:
    target = f"root@127.0.0.1:{port}"
    work.mkdir(parents=True, exist_ok=True)
    known = work / "known_hosts"
    known.write_text(f"[127.0.0.1]:{port} {twin.host_public_key}\n")
    extra = ["-p", "public_paramiko"] if public else []
    run = run_suite([target], profile, work, twin.identity, known, extra)
    if run.returncode != 0:
        raise SystemExit(f"bench_link: the healthy twin did not pass:\n{run.describe()}")
    return run, target


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rtt-ms", type=float, default=40.0, help="round-trip time of the slow link")
    parser.add_argument("--repeat", type=int, default=2, help="suite runs per link (default 2)")
    parser.add_argument("--runs", type=int, default=5, help="timed inferences per model (default 5)")
    parser.add_argument("--public-api", action="store_true", help="also measure paramiko's public API only")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-link-") as tmp:
        work = Path(tmp)
        profile = imx95_twin_profile(work / "profile", runs=args.runs)
        try:
            twin = start_twin(imx95_spec(HEALTHY, imx95_assets(work / "assets")), work / "twins")
        except TwinError as exc:
            print(f"bench_link: {exc}", file=sys.stderr)
            return 1
        try:
            figures = _measure(twin, work, profile, args)
        finally:
            twin.stop()
    _report(figures, args)
    return 0


def _measure(twin: Twin, work: Path, profile: Path, args: argparse.Namespace) -> dict[str, list]:
    figures: dict[str, list] = {
        "loop_wall": [],
        "loop_exam": [],
        "slow_wall": [],
        "slow_exam": [],
        "trips": [],
    }
    with DelayProxy((twin.host, twin.port), one_way_s=args.rtt_ms / 2000) as proxy:
        for index in range(args.repeat):
            run, target = _suite(twin, twin.port, work / f"loop{index}", profile)
            figures["loop_wall"].append(run.seconds)
            figures["loop_exam"].append(_examined(run, target)[0])
            proxy.reset()
            run, target = _suite(twin, proxy.port, work / f"slow{index}", profile)
            figures["slow_wall"].append(run.seconds)
            exam, timings = _examined(run, target)
            figures["slow_exam"].append(exam)
            figures["trips"].append(proxy.waits + 1)
            figures.setdefault("phases", []).append(timings)
            if args.public_api:
                os.environ["PYTHONPATH"] = os.pathsep.join(
                    filter(None, [str(BENCH), os.environ.get("PYTHONPATH")])
                )
                proxy.reset()
                run, target = _suite(twin, proxy.port, work / f"public{index}", profile, public=True)
                figures.setdefault("public_exam", []).append(_examined(run, target)[0])
                figures.setdefault("public_trips", []).append(proxy.waits + 1)
    return figures


def _report(f: dict[str, list], args: argparse.Namespace) -> None:
    med = statistics.median
    load = "/".join(f"{x:.2f}" for x in os.getloadavg())
    trips = med(f["trips"])
    exam_ratio = med(f["slow_exam"]) / med(f["loop_exam"])
    wall_ratio = med(f["slow_wall"]) / med(f["loop_wall"])
    print(f"one healthy i.MX95 twin, {args.repeat} suite runs per link, load average {load}")
    print(f"  round trips per board run (counted at the proxy): {trips:.0f}  (goal <= 25; before: ~136)")
    print(
        f"  examination wall: loopback {med(f['loop_exam']):.2f} s, {args.rtt_ms:g} ms RTT "
        f"{med(f['slow_exam']):.2f} s = {exam_ratio:.2f}x  (goal <= 2x; before: 7.4x)"
    )
    print(
        f"  suite process wall: loopback {med(f['loop_wall']):.2f} s, {args.rtt_ms:g} ms RTT "
        f"{med(f['slow_wall']):.2f} s = {wall_ratio:.2f}x"
    )
    if "public_trips" in f:
        public_trips = med(f["public_trips"])
        print(
            f"  paramiko public API only over {args.rtt_ms:g} ms: {public_trips:.0f} round trips "
            f"({public_trips / trips:.2f}x), examination {med(f['public_exam']):.2f} s "
            f"({med(f['public_exam']) / med(f['slow_exam']):.2f}x the transport's)"
        )
    phases = f["phases"][-1]
    print("  phases over the slow link: " + ", ".join(f"{k} {v:.2f} s" for k, v in phases.items()))


if __name__ == "__main__":
    sys.exit(main())

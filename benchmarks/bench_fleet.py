#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Benchmark: fleet mode — the full acceptance suite on 1 vs N healthy i.MX95 twins at once.

    python3 benchmarks/bench_fleet.py [--boards 16]

One `pytest pytests` process with one --target, then with N --target options (boards examined
concurrently, one thread each). Prints both wall times and their ratio (target: <= 1.5x), plus the
CPU the twins' on-board work needed: a twin's "board" computes on this host's cores, so with fewer
cores than boards the ratio is bounded below by (board CPU of N boards) / cores, which a real fleet
(each board its own CPU) does not pay.  Needs root, like the tests.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1] / "tests"
sys.path[:0] = [str(TESTS), str(TESTS.parent / "src")]

from twins.boards_run import fleet_access, run_suite  # noqa: E402

from npu_accept.sim.harness import Twin, TwinError, start_twin  # noqa: E402
from npu_accept.sim.imx95 import HEALTHY, imx95_assets, imx95_spec, imx95_twin_profile  # noqa: E402


def _board_cpu(twins: list[Twin]) -> float:
    """CPU seconds used so far by every process that ever ran inside the twins (reaped children included)."""
    total = 0.0
    tick = os.sysconf("SC_CLK_TCK")
    for twin in twins:
        for pid in twin.pids():
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            # utime stime cutime cstime: fields 14-17 of stat, here 11-14 after the command name
            total += sum(int(x) for x in fields[11:15]) / tick
    return total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--boards", type=int, default=16, help="fleet size (default 16)")
    parser.add_argument("--runs", type=int, default=20, help="timed inferences per model (default 20)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-fleet-") as tmp:
        work = Path(tmp)
        assets = imx95_assets(work / "assets")
        profile = imx95_twin_profile(work / "profile", runs=args.runs)
        twins: list[Twin] = []
        try:
            for _ in range(args.boards):
                twins.append(start_twin(imx95_spec(HEALTHY, assets), work / "twins"))
            identity, known_hosts = fleet_access(twins, work / "access")
            results = {}
            for count in (1, args.boards):
                fleet = twins[:count]
                cpu_before = _board_cpu(fleet)
                suite_before = resource.getrusage(resource.RUSAGE_CHILDREN)
                started = time.monotonic()
                run = run_suite(
                    [t.target for t in fleet], profile, work / f"fleet{count}", identity, known_hosts
                )
                wall = time.monotonic() - started
                board_cpu = _board_cpu(fleet) - cpu_before
                suite_after = resource.getrusage(resource.RUSAGE_CHILDREN)
                suite_cpu = (suite_after.ru_utime - suite_before.ru_utime) + (
                    suite_after.ru_stime - suite_before.ru_stime
                )
                if run.returncode != 0:
                    print(
                        f"bench_fleet: the fleet of {count} did not pass:\n{run.describe()}", file=sys.stderr
                    )
                    return 1
                results[count] = (wall, board_cpu, suite_cpu)
                print(
                    f"{count:2d} board(s): wall {wall:.2f} s, suite process CPU {suite_cpu:.2f} s, "
                    f"on-board CPU {board_cpu:.2f} s, "
                    f"{len(run.cases)} test cases passed"
                )
        except TwinError as exc:
            print(f"bench_fleet: {exc}", file=sys.stderr)
            return 1
        finally:
            for twin in twins:
                twin.stop()
    (one, _, _), (many, many_board, many_suite) = results[1], results[args.boards]
    cores = os.cpu_count() or 1
    floor = max(1.0, (many_board + many_suite) / cores / one)
    print(
        f"fleet ratio {args.boards} vs 1 boards: {many / one:.2f}x (target <= 1.5x); the twins' on-board "
        f"work and the suite share {cores} host cores, which bounds the ratio below by {floor:.2f}x here"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

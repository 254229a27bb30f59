#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Benchmark: fleet mode — the suite process's own CPU against the fleet size (healthy i.MX95 twins).

    python3 benchmarks/bench_fleet.py [--sizes 1,8,16,32] [--runs 5] [--repeat N] [--breakdown]

One `pytest pytests` process per fleet size, every board examined concurrently. Printed per size:
wall time, the CPU of the suite process (os.wait4 of that process) apart from the CPU the twins'
on-board work took (every process inside the twins, reaped children included), the suite's CPU
per board, and the load average. Goals (issue 14): suite CPU per board <= 0.05 s at 32 boards,
and suite CPU at 32 boards <= 2x the CPU at 8 (no super-linear growth). A twin's "board" computes
on this host's cores, so the wall time says little about a real fleet; the suite's CPU does.
Needs root, like the tests.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1] / "tests"
sys.path[:0] = [str(TESTS), str(TESTS.parent / "src")]

from twins.boards_run import SuiteRun, fleet_access, run_suite  # noqa: E402

from npu_accept.sim.harness import Twin, TwinError, started_twins  # noqa: E402
from npu_accept.sim.imx95 import HEALTHY, imx95_assets, imx95_spec, imx95_twin_profile  # noqa: E402


def _board_cpu(twins: list[Twin]) -> float:
    """CPU seconds used so far by every process that ever ran inside the twins (reaped children included)."""
    return sum(twin.cpu_seconds() for twin in twins)


def _load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


_PROBE_ORDER = ("start-up", "examination", "tests", "reports", "board", "transport", "stdin", "other threads")


def _breakdown(path: Path, total: float) -> dict[str, float]:
    """CPU seconds by part of the suite process (fleet_probe's file); 'rest' is what no thread's
    clock holds (threads Python did not start, such as BLAS's, and the interpreter's exit)."""
    probe = json.loads(path.read_text())
    parts = {**probe["main"], **probe["threads"]}
    parts = {name: parts.get(name, 0.0) for name in _PROBE_ORDER}
    parts["rest"] = total - sum(parts.values())
    return parts


def _show_parts(parts: dict[str, float], scale: float, unit: str) -> str:
    main = ", ".join(f"{k} {parts[k] * scale:.{3 if unit == 's' else 1}f}" for k in _PROBE_ORDER[:4])
    rest = ", ".join(
        f"{k} {parts[k] * scale:.{3 if unit == 's' else 1}f}" for k in (*_PROBE_ORDER[4:], "rest")
    )
    return f"main thread: {main} {unit} | threads: {rest} {unit}"


def _measure(
    twins: list[Twin], sizes: list[int], work: Path, profile: Path, repeat: int, breakdown: bool = False
) -> list[dict[int, tuple]]:
    """One dict of figures per round; each round runs every size once (rounds interleave sizes,
    so a drift of the machine's speed touches every size alike)."""
    identity, known_hosts = fleet_access(twins, work / "access")
    rounds: list[dict[int, tuple]] = []
    for round_ in range(repeat):
        figures: dict[int, tuple] = {}
        for count in sizes:
            fleet = twins[:count]
            before = _board_cpu(fleet)
            extra: list[str] = []
            probe = work / f"probe{count}-{round_}.json"
            if breakdown:
                extra = ["-p", "fleet_probe"]
                os.environ["NPU_FLEET_PROBE"] = str(probe)
            run: SuiteRun = run_suite(
                [t.target for t in fleet],
                profile,
                work / f"fleet{count}-{round_}",
                identity,
                known_hosts,
                extra,
            )
            board_cpu = _board_cpu(fleet) - before
            if run.returncode != 0:
                raise SystemExit(f"bench_fleet: the fleet of {count} did not pass:\n{run.describe()}")
            parts = _breakdown(probe, run.cpu_seconds) if breakdown else None
            figures[count] = (run.seconds, run.cpu_seconds, board_cpu, run.max_rss_kib / 1024, _load(), parts)
            wall, cpu, twins_cpu, rss, load, _ = figures[count]
            print(
                f"{count:3d} board(s): wall {wall:6.2f} s | suite process CPU {cpu:5.2f} s "
                f"({cpu / count:.3f} s per board), peak RSS {rss:.0f} MiB | twins' on-board CPU "
                f"{twins_cpu:6.2f} s | load {load}",
                flush=True,
            )
            if parts is not None:
                print(f"      {_show_parts(parts, 1.0, 's')}", flush=True)
        rounds.append(figures)
    return rounds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes", default="1,8,16,32", help="fleet sizes, comma-separated (default 1,8,16,32)"
    )
    parser.add_argument("--runs", type=int, default=5, help="timed inferences per model (default 5)")
    parser.add_argument(
        "--breakdown",
        action="store_true",
        help="also print where the suite's CPU goes (benchmarks/fleet_probe.py in the suite's process)",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="rounds of every size (default 1); the goals then print each round's figure and the median",
    )
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    sizes = sorted({int(s) for s in args.sizes.split(",")})
    with tempfile.TemporaryDirectory(prefix="bench-fleet-") as tmp:
        work = Path(tmp)
        assets = imx95_assets(work / "assets")
        profile = imx95_twin_profile(work / "profile", runs=args.runs)
        try:
            specs = (imx95_spec(HEALTHY, assets) for _ in range(max(sizes)))
            with started_twins(specs, work / "twins") as twins:
                if args.breakdown:  # the suite's process finds fleet_probe here
                    here = str(Path(__file__).resolve().parent)
                    paths = (here, os.environ.get("PYTHONPATH"))
                    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, paths))
                rounds = _measure(twins, sizes, work, profile, args.repeat, args.breakdown)
        except TwinError as exc:
            print(f"bench_fleet: {exc}", file=sys.stderr)
            return 1
    _goals(rounds, sizes)
    return 0


def _goals(rounds: list[dict[int, tuple]], sizes: list[int]) -> None:
    big, first = max(sizes), sizes[0]

    def show(values: list[float], unit: str) -> str:
        text = ", ".join(f"{v:.3f}{unit}" for v in values)
        return text if len(values) == 1 else f"{text} (median {statistics.median(values):.3f}{unit})"

    per_board = [r[big][1] / big for r in rounds]
    print(f"suite CPU per board at {big} boards: {show(per_board, ' s')} (goal <= 0.05 s)")
    if len(sizes) > 1:
        marginal = [(r[big][1] - r[first][1]) / (big - first) for r in rounds]
        print(
            f"  of which each board beyond the first adds {show(marginal, ' s')} "
            "(the rest is pytest's start-up)"
        )
    if 8 in sizes and big > 8:
        ratio = [r[big][1] / r[8][1] for r in rounds]
        print(f"suite CPU at {big} boards / at 8 boards: {show(ratio, 'x')} (goal <= 2x)")
    # The twins' on-board work is the same in every round (the same models, runs and tools), so
    # the CPU it took gauges the machine's speed during that very run; the suite's CPU as a share
    # of it moves little when the machine's speed drifts (on this shared machine, by up to 1.5x
    # within the hour).
    share = [r[big][1] / r[big][2] for r in rounds if r[big][2] > 0]
    if share:
        print(
            f"suite CPU / twins' on-board CPU at {big} boards: {show([100 * x for x in share], ' %')} "
            "(the twins' work is the same every round: a gauge of the machine's speed)"
        )
    # Growth: the suite's cost per added board in each step between sizes; equal steps are linear
    # growth, a later step costing more per board is super-linear.
    steps = [(a, b) for a, b in itertools.pairwise(sizes) if a >= 8]
    for a, b in steps:
        added = [(r[b][1] - r[a][1]) / (b - a) for r in rounds]
        print(f"  each board from {a} to {b} adds {show(added, ' s')}")
    if len(steps) >= 2:
        (a0, b0), (a1, b1) = steps[0], steps[-1]
        growth = [
            ((r[b1][1] - r[a1][1]) / (b1 - a1)) / ((r[b0][1] - r[a0][1]) / (b0 - a0))
            for r in rounds
            if r[b0][1] > r[a0][1]  # a drift of the machine can make a larger fleet cost less
        ]
        if growth:
            print(
                f"  cost per board from {a1} to {b1} / from {a0} to {b0}: {show(growth, 'x')} "
                "(1x: linear growth)"
            )
    if len(sizes) > 1 and all(r[big][5] is not None for r in rounds):
        print(f"where each board beyond the first goes, in ms (median over rounds, {first} to {big} boards):")
        names = (*_PROBE_ORDER, "rest")
        added = {
            n: statistics.median((r[big][5][n] - r[first][5][n]) / (big - first) for r in rounds)
            for n in names
        }
        print(f"  {_show_parts(added, 1000.0, 'ms')}")


if __name__ == "__main__":
    sys.exit(main())

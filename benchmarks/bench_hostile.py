#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Benchmark: the suite's host memory per board while boards flood it.

    python3 benchmarks/bench_hostile.py [--floods 1,4,8] [--mode flood-random]

Peak RSS of the suite process (os.wait4) for a healthy i.MX95 twin alone, then for the healthy
twin plus N twins whose npu-run prints random bytes without end (or whose npu-info does, with
--mode flood-info; tests/twins/boards_hostile.py). Printed: peak RSS, what each flooding board
added, the wall time and the load average. Before the output bounds a flooding board drove the
suite to 9.8 GB in 60 s (issue 13). Needs root, like the tests.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1] / "tests"
sys.path[:0] = [str(TESTS), str(TESTS.parent / "src")]

from twins.boards_hostile import hostile_spec  # noqa: E402
from twins.boards_run import fleet_access, run_suite  # noqa: E402

from npu_accept.sim.harness import TwinError, started_twins  # noqa: E402
from npu_accept.sim.imx95 import HEALTHY, imx95_assets, imx95_spec, imx95_twin_profile  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--floods", default="1,4,8", help="numbers of flooding boards (default 1,4,8)")
    parser.add_argument(
        "--mode", default="flood-random", choices=("flood-random", "flood-info", "flood-line")
    )
    args = parser.parse_args()
    counts = sorted({int(c) for c in args.floods.split(",")})
    with tempfile.TemporaryDirectory(prefix="bench-hostile-") as tmp:
        work = Path(tmp)
        assets = imx95_assets(work / "assets")
        profile = imx95_twin_profile(work / "profile", runs=3)
        specs = [imx95_spec(HEALTHY, assets), *(hostile_spec(args.mode, assets) for _ in range(max(counts)))]
        try:
            with started_twins(specs, work / "twins") as twins:
                identity, known_hosts = fleet_access(twins, work / "access")
                base = None
                for floods in (0, *counts):
                    fleet = twins[: 1 + floods]
                    run = run_suite(
                        [t.target for t in fleet], profile, work / f"n{floods}", identity, known_hosts
                    )
                    rss = run.max_rss_kib / 1024
                    base = rss if base is None else base
                    added = f", {(rss - base) / floods:5.1f} MiB per flooding board" if floods else ""
                    load = "/".join(f"{x:.1f}" for x in os.getloadavg())
                    print(
                        f"healthy + {floods} x {args.mode}: suite peak RSS {rss:6.1f} MiB{added}, "
                        f"wall {run.seconds:5.1f} s, exit {run.returncode}, load {load}",
                        flush=True,
                    )
        except TwinError as exc:
            print(f"bench_hostile: {exc}", file=sys.stderr)
            return 1
    print("bound per board (docs/limits.md): 1 MiB kept per stream + the 8 MiB SSH channel window")
    return 0


if __name__ == "__main__":
    sys.exit(main())

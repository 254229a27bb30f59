#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Benchmark: the full acceptance suite on one healthy i.MX95 twin — wall time, as a user runs it.

    python3 benchmarks/bench_suite.py [--repeat N]

Prints the wall time of `python3 -m pytest pytests --target … --board …` (process start to exit),
the part spent examining the board (upload, npu-info, NPU and CPU runs, SFTP of the outputs) and
the CPU time of the suite process. Needs root (twins use mount namespaces), like the tests.
"""

from __future__ import annotations

import argparse
import re
import resource
import statistics
import sys
import tempfile
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1] / "tests"
sys.path[:0] = [str(TESTS), str(TESTS.parent / "src")]

from twins.boards_run import run_on_twin  # noqa: E402

from npu_accept.sim.harness import TwinError, start_twin  # noqa: E402
from npu_accept.sim.imx95 import HEALTHY, imx95_assets, imx95_spec, imx95_twin_profile  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="suite runs to time (default 3)")
    parser.add_argument("--runs", type=int, default=20, help="timed inferences per model (default 20)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-suite-") as tmp:
        work = Path(tmp)
        assets = imx95_assets(work / "assets")
        profile = imx95_twin_profile(work / "profile", runs=args.runs)
        try:
            twin = start_twin(imx95_spec(HEALTHY, assets), work / "twins")
        except TwinError as exc:
            print(f"bench_suite: {exc}", file=sys.stderr)
            return 1
        walls, examined = [], []
        try:
            for index in range(args.repeat):
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                run = run_on_twin(twin, profile, work / f"run{index}")
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                if run.returncode != 0:
                    print(f"bench_suite: the healthy twin did not pass:\n{run.describe()}", file=sys.stderr)
                    return 1
                seconds = float(
                    re.search(r"Examined in ([0-9.]+) s", (run.artifacts / "report.md").read_text())[1]
                )
                walls.append(run.seconds)
                examined.append(seconds)
                cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
                print(
                    f"run {index + 1}: wall {run.seconds:.2f} s, board examined in {seconds:.2f} s, "
                    f"suite process CPU {cpu:.2f} s (the twin's own work runs in sshd's children)"
                )
        finally:
            twin.stop()
    print(
        f"full suite on one healthy twin ({args.runs} timed inferences per run, NPU + CPU): "
        f"median wall {statistics.median(walls):.2f} s (min {min(walls):.2f}, max {max(walls):.2f}), "
        f"median board examination {statistics.median(examined):.2f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

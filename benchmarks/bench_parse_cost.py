#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Benchmark: what meta-npu adds to a full `bitbake -p` of a real stack, with the NPU feature on.

Run it inside a BitBake build environment whose bblayers.conf holds meta-npu (a kas shell):

    kas shell kas/rock-5b.yml -c 'python3 ../benchmarks/bench_parse_cost.py --rounds 2'

(offline, where kas cannot fetch, any wrapper that gives kas local mirrors and runs a command in its
shell does as well). Each round parses the stack twice
from a cold parse cache, once with meta-npu in BBLAYERS and once without (the layer's line taken
out of conf/bblayers.conf and put back afterwards; local.conf is left as kas wrote it, so the
feature's MACHINE_FEATURES entry is there both times and is inert without the layer), in
alternating order (with/without, then without/with) so a machine that slows down during the run
weighs on both. Figures: BitBake's own recipe count and wall time of each parse, the median of each
side, the overhead (median with / median without - 1) against the goal (issue 26: <= 2 %), and the
load average before and after. Exit status 0, or 2 with one sentence for bad usage.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

GOAL_PERCENT = 2.0
CACHE_FILES = ("bb_cache.dat", "bb_codeparser.dat")
PARSED = re.compile(r"Parsing of (\d+) \.bb files complete \((\d+) cached, (\d+) parsed\)\. (\d+) targets")


def fail(message: str) -> None:
    print(f"bench_parse_cost: {message}", file=sys.stderr)
    sys.exit(2)


def drop_parse_caches(build: Path) -> int:
    """Remove BitBake's recipe and code-parser caches under the build directory: the next parse is cold."""
    removed = 0
    for path in build.rglob("bb_*.dat*"):
        if path.is_file() and path.name.startswith(CACHE_FILES) and "sstate-cache" not in path.parts:
            path.unlink()
            removed += 1
    return removed


def without_layer(text: str, layer: Path) -> str:
    """bblayers.conf with the layer's BBLAYERS word removed (BBLAYERS:remove, applied by BitBake)."""
    words = [w.strip('"\\') for w in text.replace("\\\n", " ").split()]
    mine = [w for w in words if w.rstrip("/").endswith("/" + layer.name) or w == str(layer)]
    if not mine:
        fail(f"conf/bblayers.conf does not list {layer.name}: run inside the kas shell of an entry.")
    return text + "".join(f'\nBBLAYERS:remove = "{w}"\n' for w in mine)


def parse_once(build: Path) -> dict:
    drop_parse_caches(build)
    start = time.monotonic()
    proc = subprocess.run(
        ["bitbake", "-p"], cwd=build, capture_output=True, text=True, errors="replace", check=False
    )
    wall = time.monotonic() - start
    found = PARSED.findall(proc.stdout + proc.stderr)
    errors = re.findall(r"^ERROR: ", proc.stdout + proc.stderr, re.M)
    if proc.returncode or not found:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-5:])
        fail(f"bitbake -p failed (exit {proc.returncode}), so there is nothing to compare:\n{tail}")
    files, cached, parsed, targets = map(int, found[-1])
    summary = [line for line in (proc.stdout + proc.stderr).splitlines() if PARSED.search(line)][-1]
    return {
        "bitbake": summary.strip(),
        "wall_s": round(wall, 2),
        "recipes": files,
        "cached": cached,
        "parsed": parsed,
        "targets": targets,
        "errors": len(errors),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=2, help="rounds of (with, without) parses (default 2)")
    ap.add_argument("--layer", type=Path, default=Path(__file__).resolve().parent.parent / "meta-npu")
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    args = ap.parse_args()
    if args.rounds < 1:
        fail("--rounds must be 1 or more.")
    build = Path(os.environ.get("BUILDDIR") or Path.cwd())
    bblayers = build / "conf" / "bblayers.conf"
    if not bblayers.is_file():
        fail(f"{bblayers} does not exist: run inside a BitBake build environment (kas shell ENTRY).")
    layer = args.layer.resolve()
    original = bblayers.read_text()
    stripped = without_layer(original, layer)

    runs: list[dict] = []
    load_before = os.getloadavg()
    try:
        for number in range(args.rounds):
            order = ("with", "without") if number % 2 == 0 else ("without", "with")
            for side in order:
                bblayers.write_text(original if side == "with" else stripped)
                runs.append({"round": number + 1, "side": side, **parse_once(build)})
                print(
                    f"  round {number + 1} {side:7} {runs[-1]['wall_s']:8.1f} s"
                    f"  {runs[-1]['recipes']} recipes",
                    file=sys.stderr,
                )
                print(f"    {runs[-1]['bitbake']}", file=sys.stderr)
    finally:
        bblayers.write_text(original)
    load_after = os.getloadavg()

    median = {s: statistics.median(r["wall_s"] for r in runs if r["side"] == s) for s in ("with", "without")}
    overhead = (median["with"] / median["without"] - 1) * 100
    spread = {s: [r["wall_s"] for r in runs if r["side"] == s] for s in ("with", "without")}
    result = {
        "schema": "bench-parse-cost/1",
        "layer": str(layer),
        "rounds": args.rounds,
        "runs": runs,
        "median_wall_s": median,
        "overhead_percent": round(overhead, 2),
        "goal_percent": GOAL_PERCENT,
        "goal_met": overhead <= GOAL_PERCENT,
        "recipes_added": max(r["recipes"] for r in runs if r["side"] == "with")
        - max(r["recipes"] for r in runs if r["side"] == "without"),
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in load_after],
        "cpus": os.cpu_count(),
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"bitbake -p, cold parse cache, {args.rounds} round(s), {os.cpu_count()} CPUs")
    print(f"  with meta-npu     median {median['with']:.1f} s  (runs: {spread['with']})")
    print(f"  without meta-npu  median {median['without']:.1f} s  (runs: {spread['without']})")
    print(f"  recipes added by meta-npu: {result['recipes_added']}")
    print(
        f"  overhead {overhead:+.2f} %  (goal <= {GOAL_PERCENT:.0f} %: "
        f"{'met' if result['goal_met'] else 'NOT met'})"
    )
    print(f"  load average before {result['load_average_before']}, after {result['load_average_after']}")
    print("@@bench-parse-cost " + json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())

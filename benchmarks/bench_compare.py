#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""npu-compare benchmark: wall time and peak memory beside a plain numpy baseline (prints figures;
not a test), and the compare engine under 16 threads at once (the suite's one thread per board).

Per size N (float32 elements; REF ~ N(0, 1), OUT = REF + N(0, 0.01), both saved with numpy.save):
  numpy f64  a child process that np.loads both files and computes cosine and SQNR in float64
             (np.dot / np.linalg.norm, the obvious numpy);
  numpy f32  the same in float32 (faster and smaller, less exact); ratios are against the better
             of the two baselines in each column;
  compare    a child process running `npu-compare REF OUT` (default settings);
  top-k      the same with `--top-k 5` (top-5 over the whole vector, streamed).
Each case runs in its own child; peak memory is that child's VmHWM (its peak RSS), wall time is
the child's whole life (interpreter start included), the median of --repeat runs taken round robin.

Goals: compare <= 3x the baseline's wall time and <= 2x its peak memory at 1e7 and 1e8 elements;
peak memory <= ~2x one input file.

Threads: T threads each compare a [1, 896, 16] float32 pair (the face detector's regressors) R
times at once, with the compare engine and with the BLAS-based float64 norm/dot that the engine
used to call; per-call latency beside the one-thread figure.

Run from the repository root:  python3 benchmarks/bench_compare.py [--sizes 1e6,1e7,1e8]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

_ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(_ROOT / "src")]

from npu_accept.compare import compare  # noqa: E402

BASELINE = """
import sys, numpy as np
a = np.load(sys.argv[1]).astype(sys.argv[3]).ravel()
b = np.load(sys.argv[2]).astype(sys.argv[3]).ravel()
cosine = float(a @ b) / (np.linalg.norm(a) * np.linalg.norm(b))
diff = a - b
sqnr = 10 * np.log10(float(a @ a) / float(diff @ diff))
print(f"cosine {cosine:.6f} sqnr {sqnr:.3f}")
"""

MAKE_PAIR = """
import sys, numpy as np
size, ref_path, out_path = int(sys.argv[1]), sys.argv[2], sys.argv[3]
rng = np.random.default_rng(14)
values = rng.standard_normal(size, dtype=np.float32)
np.save(ref_path, values)
values += rng.standard_normal(size, dtype=np.float32) * np.float32(0.01)
np.save(out_path, values)
"""

# Runs a module or a file as __main__, then reports the process's peak RSS since exec (VmHWM):
# ru_maxrss would also count the parent's memory, which a vforked child shares until its exec.
PEAK = """
import runpy, sys
kind, target = sys.argv[1], sys.argv[2]
sys.argv = [target, *sys.argv[3:]]
try:
    if kind == "module":
        runpy.run_module(target, run_name="__main__", alter_sys=True)
    else:
        runpy.run_path(target, run_name="__main__")
finally:
    status = open("/proc/self/status").read()
    sys.stderr.write("VmHWM " + status.split("VmHWM:")[1].split()[0] + "\\n")
"""


@dataclass(frozen=True)
class Run:
    wall_s: float
    peak_mib: float
    exit_code: int
    output: str


def _child(argv: list[str]) -> Run:
    """Run a child through PEAK; its wall time and its peak RSS (VmHWM after exec)."""
    env = {**os.environ, "PYTHONPATH": str(_ROOT / "src")}
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", PEAK, *argv], capture_output=True, text=True, env=env, cwd=_ROOT, check=False
    )
    wall = time.perf_counter() - start
    lines = proc.stderr.splitlines()
    marks = [line.split()[1] for line in lines if line.startswith("VmHWM ")]
    peak = int(marks[-1]) / 1024.0 if marks else float("nan")
    rest = "".join(f"{line}\n" for line in lines if not line.startswith("VmHWM "))
    return Run(wall, peak, proc.returncode, proc.stdout + rest)


def _median(runs: list[Run]) -> Run:
    ordered = sorted(runs, key=lambda r: r.wall_s)
    middle = ordered[len(ordered) // 2]
    return Run(middle.wall_s, max(r.peak_mib for r in runs), middle.exit_code, middle.output)


def _cases(ref: Path, out: Path, baseline: Path) -> dict[str, list[str]]:
    cli = ["module", "npu_accept.compare_cli", str(ref), str(out)]
    return {
        "numpy f64": ["file", str(baseline), str(ref), str(out), "float64"],
        "numpy f32": ["file", str(baseline), str(ref), str(out), "float32"],
        "compare": cli,
        "top-k": [*cli, "--top-k", "5"],
    }


def bench_size(size: int, repeat: int, directory: Path) -> None:
    ref_path, out_path = directory / "ref.npy", directory / "out.npy"
    (directory / "make_pair.py").write_text(MAKE_PAIR)
    (directory / "baseline.py").write_text(BASELINE)
    made = _child(["file", str(directory / "make_pair.py"), str(size), str(ref_path), str(out_path)])
    if made.exit_code:
        raise SystemExit(f"could not write the test files: {made.output.strip()}")
    input_mib = ref_path.stat().st_size / 2**20
    cases = _cases(ref_path, out_path, directory / "baseline.py")
    runs: dict[str, list[Run]] = {name: [] for name in cases}
    for _ in range(repeat):  # round robin: a noisy moment on a shared machine hits every case alike
        for name, argv in cases.items():
            runs[name].append(_child(argv))
    results = {name: _median(got) for name, got in runs.items()}
    baselines = [run for name, run in results.items() if name.startswith("numpy")]
    base_wall = min(run.wall_s for run in baselines)  # ratios against the better baseline
    base_peak = min(run.peak_mib for run in baselines)
    print(f"\nN = {size:.0e} float32 ({input_mib:.0f} MiB per file), load average {_load()}")
    print(
        f"  {'case':10s} {'wall s':>8s} {'x base':>7s} {'peak MiB':>9s} {'x base':>7s} {'x input':>8s}  exit"
    )
    for name, run in results.items():
        print(
            f"  {name:10s} {run.wall_s:8.2f} {run.wall_s / base_wall:7.2f} {run.peak_mib:9.0f} "
            f"{run.peak_mib / base_peak:7.2f} {run.peak_mib / input_mib:8.2f}  {run.exit_code}"
        )
    verdict = results["compare"].output.strip().splitlines()
    print(f"  numpy says: {baselines[0].output.strip()}; npu-compare says: {verdict[-1] if verdict else '?'}")
    for path in (ref_path, out_path):
        path.unlink()


@dataclass(frozen=True)
class Calls:
    median_ms: float
    worst_ms: float
    cpu_ms: float  # process CPU time per call, every thread of the process counted
    wall_s: float


def _calls(work: Callable[[], object], threads: int, calls: int) -> Calls:
    """`threads` threads each make `calls` calls at once: latency per call, CPU per call, wall."""
    times: list[float] = []
    lock = threading.Lock()
    barrier = threading.Barrier(threads + 1)

    def worker() -> None:
        mine = []
        barrier.wait()
        for _ in range(calls):
            start = time.perf_counter()
            work()
            mine.append(time.perf_counter() - start)
        with lock:
            times.extend(mine)

    pool = [threading.Thread(target=worker) for _ in range(threads)]
    for thread in pool:
        thread.start()
    cpu, wall = time.process_time(), time.perf_counter()
    barrier.wait()
    for thread in pool:
        thread.join()
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    return Calls(statistics.median(times) * 1e3, max(times) * 1e3, cpu / len(times) * 1e3, wall)


def bench_threads(threads: int, calls: int) -> None:
    rng = np.random.default_rng(16)
    ref = rng.standard_normal((1, 896, 16), dtype=np.float32)
    out = ref + rng.standard_normal(ref.shape, dtype=np.float32) * np.float32(0.01)

    def blas_norm_dot() -> float:  # what compare.py did before: float64 copies through BLAS
        a, b = ref.astype(np.float64).ravel(), out.astype(np.float64).ravel()
        return float(np.dot(a, b)) / (float(np.linalg.norm(a)) * float(np.linalg.norm(b)))

    def engine() -> object:
        return compare(ref, out)

    print(f"\nthreads comparing at once, [1, 896, 16] float32, {calls} calls each, load average {_load()}")
    head = ("work", "threads", "median ms", "worst ms", "CPU ms/call", "wall s")
    print("  {:20s} {:>7s} {:>10s} {:>9s} {:>12s} {:>7s}".format(*head))
    for name, work in (("BLAS norm/dot (old)", blas_norm_dot), ("compare engine", engine)):
        for count in (1, threads):
            got = _calls(work, count, calls)
            print(
                f"  {name:20s} {count:7d} {got.median_ms:10.3f} {got.worst_ms:9.1f} {got.cpu_ms:12.3f} "
                f"{got.wall_s:7.2f}"
            )
    print(f"  ({os.cpu_count()} CPUs; the engine's math never enters BLAS, so its CPU per call stays flat)")


def _load() -> str:
    return " ".join(f"{v:.2f}" for v in os.getloadavg())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1e6,1e7,1e8", help="comma-separated element counts")
    parser.add_argument("--repeat", type=int, default=3, help="runs per case (median wall, max peak)")
    parser.add_argument("--threads", type=int, default=16)
    parser.add_argument("--calls", type=int, default=10, help="calls per thread in the thread test")
    parser.add_argument("--dir", type=Path, help="where to write the .npy files (default: a temp dir)")
    args = parser.parse_args()
    print(f"numpy {np.__version__}, {os.cpu_count()} CPUs, load average {_load()}")
    with tempfile.TemporaryDirectory(dir=args.dir, prefix="bench-compare-") as tmp:
        for size in (int(float(s)) for s in args.sizes.split(",")):
            bench_size(size, args.repeat, Path(tmp))
    bench_threads(args.threads, args.calls)
    return 0


if __name__ == "__main__":
    sys.exit(main())

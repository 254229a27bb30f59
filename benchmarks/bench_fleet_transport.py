#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Benchmark: the SSH side of a fleet alone — the suite's transport (a thread per board, paramiko's
thread per connection) against asyncssh (every board in one asyncio event loop).

    python3 benchmarks/bench_fleet_transport.py [--boards 32] [--rounds 4]

Each board gets what the suite's examination of a healthy i.MX95 twin sends and fetches, as plain
shell commands (no NPU work, so the figure is the transport's alone): connect, 120 kB on stdin
(the tools archive) with a 2.5 kB answer, 196 kB on stdin (the model's inputs) with a 3 kB report,
a 3 kB report, a 125 kB and a 130 kB stream (the output tensors and the determinism re-runs), a
0.5 kB kernel log, the temp dir's removal, close. Printed: CPU of this process per board (all its
threads) and wall time per round, the two kinds interleaved, and their medians. The question it
answers: would one event loop instead of two threads a board lower the suite's CPU per board?

Needs root (board twins) and asyncssh (not a dependency of the project: `pip install asyncssh`).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1] / "tests"
sys.path[:0] = [str(TESTS), str(TESTS.parent / "src")]

from twins.boards_run import fleet_access  # noqa: E402

from npu_accept.sim.harness import Twin, TwinError, started_twins  # noqa: E402
from npu_accept.sim.imx95 import HEALTHY, imx95_assets, imx95_spec  # noqa: E402
from npu_accept.transport import Connection  # noqa: E402

_TOOLS = os.urandom(120_000)
_INPUTS = os.urandom(196_000)
# (command, stdin): one board's examination, byte for byte as large as the suite's
COMMANDS: list[tuple[str, bytes | None]] = [
    ("cat >/dev/null; head -c 2500 /dev/zero", _TOOLS),
    ("cat >/dev/null; head -c 3000 /dev/zero; head -c 300 /dev/zero >&2", _INPUTS),
    ("head -c 3000 /dev/zero; head -c 60 /dev/zero >&2", None),
    ("head -c 125000 /dev/urandom", None),
    ("head -c 130000 /dev/urandom", None),
    ("head -c 500 /dev/zero", None),
    ("rm -rf /tmp/npu-accept-bench-none", None),
]
EXPECTED = 2500 + 3000 + 3000 + 125_000 + 130_000 + 500


def _threaded_board(twin: Twin, identity: Path, known_hosts: Path) -> int:
    connection = Connection.open(twin.target, identity=identity, known_hosts=known_hosts)
    try:
        received = 0
        for command, data in COMMANDS:
            result = connection.run(command, timeout=60, input=data)
            if result.exit_code != 0:
                raise SystemExit(f"bench_fleet_transport: {command!r} failed on {twin.target}")
            received += len(result.stdout)
        return received
    finally:
        connection.close()


def threaded(twins: list[Twin], identity: Path, known_hosts: Path) -> int:
    with ThreadPoolExecutor(max_workers=len(twins)) as pool:
        return sum(pool.map(lambda t: _threaded_board(t, identity, known_hosts), twins))


def in_one_loop(twins: list[Twin], identity: Path, known_hosts: Path) -> int:
    import asyncssh

    async def board(twin: Twin) -> int:
        async with asyncssh.connect(
            twin.host,
            port=twin.port,
            username="root",
            client_keys=[str(identity)],
            known_hosts=str(known_hosts),
            agent_path=None,
        ) as connection:
            received = 0
            for command, data in COMMANDS:
                result = await connection.run(command, input=data, encoding=None, check=True, timeout=60)
                received += len(result.stdout or b"")
            return received

    async def fleet() -> int:
        return sum(await asyncio.gather(*(board(t) for t in twins)))

    return asyncio.run(fleet())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--boards", type=int, default=32, help="board twins (default 32)")
    parser.add_argument("--rounds", type=int, default=4, help="rounds of both kinds (default 4)")
    args = parser.parse_args()
    if args.boards < 1 or args.rounds < 1:
        parser.error("--boards and --rounds must be at least 1")
    try:
        import asyncssh  # noqa: F401
    except ImportError:
        print(
            "bench_fleet_transport: asyncssh is not installed; run `pip install asyncssh` first.",
            file=sys.stderr,
        )
        return 2
    kinds = {"suite's transport (threads)": threaded, "asyncssh (one event loop)": in_one_loop}
    figures: dict[str, list[float]] = {name: [] for name in kinds}
    with tempfile.TemporaryDirectory(prefix="bench-fleet-transport-") as tmp:
        work = Path(tmp)
        assets = imx95_assets(work / "assets")
        try:
            specs = (imx95_spec(HEALTHY, assets) for _ in range(args.boards))
            with started_twins(specs, work / "twins") as twins:
                identity, known_hosts = fleet_access(twins, work / "access")
                for run in kinds.values():  # imports and first connections out of the figures
                    run(twins[:1], identity, known_hosts)
                for round_ in range(args.rounds):
                    for name, run in kinds.items():
                        cpu, wall = time.process_time(), time.monotonic()
                        received = run(twins, identity, known_hosts)
                        cpu, wall = time.process_time() - cpu, time.monotonic() - wall
                        if received != EXPECTED * len(twins):
                            raise SystemExit(f"bench_fleet_transport: {name} received {received} bytes")
                        figures[name].append(cpu / len(twins))
                        load = "/".join(f"{x:.1f}" for x in os.getloadavg())
                        print(
                            f"round {round_ + 1}: {name:28s} {1000 * cpu / len(twins):6.2f} ms CPU per "
                            f"board, wall {wall:5.2f} s, load {load}",
                            flush=True,
                        )
        except TwinError as exc:
            print(f"bench_fleet_transport: {exc}", file=sys.stderr)
            return 1
    for name, values in figures.items():
        print(
            f"{name}: median {1000 * statistics.median(values):.2f} ms CPU per board ({args.boards} boards)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

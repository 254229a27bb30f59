#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Transport benchmark on one board twin (prints figures; not a test).

Per command, N small commands three ways:
(a) this suite's transport (one paramiko connection, Connection.run),
(b) one OpenSSH `ssh` process per command, as oeqa's SSHControl does,
(c) raw paramiko: SSHClient.exec_command on one connection, read stdout, recv_exit_status --
    measured as it comes and with TCP_NODELAY set like the transport does (the fair baseline).
Transfers: a 64 MiB file up and down with Connection.put/get against OpenSSH's scp (its default,
the SFTP protocol, and its default cipher) on the same twin, interleaved.

Goals: (a) >= 10x faster than (b) (issue 3); (a) <= 1.1x (c) and transfers >= 0.8x scp in both
directions (issue 14). Every figure is printed beside its baseline, with the load average.
Run as root from the repository root:  python3 benchmarks/bench_transport.py [-n 500] [--mib 64]
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(_ROOT / "src"), str(_ROOT / "tests")]

import paramiko  # noqa: E402

from npu_accept.sim.harness import Twin, TwinError, TwinSpec, start_twin  # noqa: E402
from npu_accept.transport import Connection, TransportError  # noqa: E402

COMMAND = "echo x"


@dataclass(frozen=True)
class Figures:
    name: str
    per_command_ms: list[float]

    @property
    def mean_ms(self) -> float:
        return statistics.fmean(self.per_command_ms)

    @property
    def p50_ms(self) -> float:
        return statistics.median(self.per_command_ms)


Runner = Callable[[], bytes]


def _check(name: str, out: bytes) -> None:
    if out != b"x\n":
        raise SystemExit(f"{name}: the command printed {out!r}, not b'x\\n'; the figures would be invalid.")


def _ssh_per_command(twin: Twin) -> Runner:
    argv = [
        "ssh",
        "-o",
        "BatchMode=yes",
        "-o",
        "StrictHostKeyChecking=yes",
        "-o",
        f"UserKnownHostsFile={twin.known_hosts}",
        "-o",
        "LogLevel=ERROR",
        "-i",
        str(twin.identity),
        "-p",
        str(twin.port),
        f"{twin.user}@{twin.host}",
        COMMAND,
    ]
    return lambda: subprocess.run(argv, capture_output=True, timeout=30, check=True).stdout


def _raw_paramiko(twin: Twin, nodelay: bool) -> tuple[paramiko.SSHClient, Runner]:
    client = paramiko.SSHClient()
    client.load_host_keys(str(twin.known_hosts))
    client.connect(
        twin.host,
        port=twin.port,
        username=twin.user,
        key_filename=str(twin.identity),
        allow_agent=False,
        look_for_keys=False,
    )
    transport = client.get_transport()
    if nodelay and transport is not None:
        transport.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def one() -> bytes:
        _, stdout, stderr = client.exec_command(COMMAND, timeout=10)
        out = stdout.read()
        stderr.read()
        stdout.channel.recv_exit_status()
        return out

    return client, one


def _run_interleaved(methods: dict[str, Runner], n: int, rounds: int) -> list[Figures]:
    # The machine is shared: interleave the methods in rounds so that load drift hits all alike.
    times: dict[str, list[float]] = {name: [] for name in methods}
    for name, one in methods.items():
        _check(name, one())  # warm-up, not timed
    for r in range(rounds):
        batch = n // rounds + (1 if r < n % rounds else 0)
        for name, one in methods.items():
            for _ in range(batch):
                start = time.perf_counter()
                out = one()
                times[name].append((time.perf_counter() - start) * 1000)
                _check(name, out)
    return [Figures(name, t) for name, t in times.items()]


def bench(twin: Twin, n: int, rounds: int) -> list[Figures]:
    """Figures of (a) the transport, (b) ssh per command, (c) raw paramiko, (c') raw + TCP_NODELAY."""
    conn = Connection.open(twin.target, identity=twin.identity, known_hosts=twin.known_hosts)
    raw, raw_one = _raw_paramiko(twin, nodelay=False)
    raw_nd, raw_nd_one = _raw_paramiko(twin, nodelay=True)
    try:
        return _run_interleaved(
            {
                "npu_accept transport": lambda: conn.run(COMMAND, timeout=10).stdout,
                "ssh process per command": _ssh_per_command(twin),
                "raw paramiko exec_command": raw_one,
                "raw paramiko + TCP_NODELAY": raw_nd_one,
            },
            n,
            rounds,
        )
    finally:
        conn.close()
        raw.close()
        raw_nd.close()


def _scp(twin: Twin, source: str, target: str) -> None:
    options = [
        "-q",
        "-o",
        "BatchMode=yes",
        "-o",
        f"UserKnownHostsFile={twin.known_hosts}",
        "-i",
        str(twin.identity),
    ]
    subprocess.run(["scp", *options, "-P", str(twin.port), source, target], check=True, timeout=300)


def bench_transfers(twin: Twin, work: Path, mib: int, rounds: int) -> dict[str, list[float]]:
    """Seconds per transfer of a MIB-MiB file: ours and scp, up and down, interleaved."""
    blob = work / "blob"
    blob.write_bytes(os.urandom(mib << 20))
    remote = f"{twin.user}@{twin.host}"
    times: dict[str, list[float]] = {"put": [], "scp up": [], "get": [], "scp down": []}
    with Connection.open(twin.target, identity=twin.identity, known_hosts=twin.known_hosts) as conn:
        tmp = conn.make_temp_dir()
        steps = {
            "put": lambda: conn.put(blob, f"{tmp}/ours"),
            "scp up": lambda: _scp(twin, str(blob), f"{remote}:{tmp}/theirs"),
            "get": lambda: conn.get(f"{tmp}/ours", work / "back"),
            "scp down": lambda: _scp(twin, f"{remote}:{tmp}/theirs", str(work / "back-scp")),
        }
        for _ in range(rounds):
            for name, step in steps.items():
                start = time.perf_counter()
                step()
                times[name].append(time.perf_counter() - start)
        if (work / "back").read_bytes() != blob.read_bytes():
            raise SystemExit("bench_transport: the downloaded file differs; the figures would be invalid.")
    return times


def _report_transfers(times: dict[str, list[float]], mib: int) -> None:
    speed = {name: mib / statistics.median(values) for name, values in times.items()}
    verdict = {True: "met", False: "MISSED"}
    for ours, theirs, direction in (("put", "scp up", "upload"), ("get", "scp down", "download")):
        ratio = speed[ours] / speed[theirs]
        print(
            f"  {direction:<8} {mib} MiB: transport {speed[ours]:6.1f} MiB/s, scp {speed[theirs]:6.1f} MiB/s "
            f"= {ratio:.2f}x (>= 0.8x: {verdict[ratio >= 0.8]})"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=500, help="commands per method (default 500)")
    parser.add_argument("--rounds", type=int, default=10, help="interleaving rounds (default 10)")
    parser.add_argument("--mib", type=int, default=64, help="size of the transfer test file (default 64)")
    parser.add_argument("--transfer-rounds", type=int, default=3, help="rounds of each transfer (default 3)")
    args = parser.parse_args(argv)
    if args.n < 1 or not 1 <= args.rounds <= args.n:
        parser.error("-n must be at least 1 and --rounds between 1 and n")
    with tempfile.TemporaryDirectory(prefix="bench-transport-") as tmp:
        try:
            twin = start_twin(TwinSpec(name="bench"), Path(tmp))
        except TwinError as e:
            print(e, file=sys.stderr)
            return 1
        try:
            results = bench(twin, args.n, args.rounds)
            transfers = bench_transfers(twin, Path(tmp), args.mib, args.transfer_rounds)
        except (TransportError, paramiko.SSHException, subprocess.CalledProcessError) as e:
            print(f"The benchmark failed: {e}", file=sys.stderr)
            return 1
        finally:
            twin.stop()
    ours, ssh, raw_plain, raw = results
    load = "/".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"load average {load}")
    print(f"{args.n} x {COMMAND!r} per method on one twin ({twin.target}), {args.rounds} interleaved rounds")
    for r in results:
        total_s = sum(r.per_command_ms) / 1000
        print(f"  {r.name:<28} mean {r.mean_ms:7.2f} ms   p50 {r.p50_ms:7.2f} ms   total {total_s:6.2f} s")
    speedup = ssh.mean_ms / ours.mean_ms
    overhead = ours.mean_ms / raw.mean_ms
    verdict = {True: "met", False: "MISSED"}
    print(f"  ssh per command / transport      = {speedup:6.1f}x (>= 10x: {verdict[speedup >= 10]})")
    print(f"  transport / raw paramiko+NODELAY = {overhead:6.2f}x (<= 1.1x: {verdict[overhead <= 1.1]})")
    print(f"  transport / raw paramiko         = {ours.mean_ms / raw_plain.mean_ms:6.2f}x")
    print(f"transfers, median of {args.transfer_rounds} interleaved rounds:")
    _report_transfers(transfers, args.mib)
    return 0


if __name__ == "__main__":
    sys.exit(main())

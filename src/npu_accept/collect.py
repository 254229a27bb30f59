# SPDX-License-Identifier: MIT
"""Gather the facts of one board over SSH: upload the on-target tools, run npu-info, run every
profile model through the NPU and the CPU, pull the output tensors.

The suite always uploads the repository's own npu-run/npu-info (and the npu_target package) to a
temp dir on the board, whatever the image has installed: the checks then judge the board with the
tools under review, and a board with old or missing tools can still be accepted.  The transport
removes the temp dir when the connection closes.
"""

from __future__ import annotations

import json
import re
import shlex
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from npu_accept.checks.registry import collectors
from npu_accept.facts import BoardFacts, ModelFacts, RunFacts
from npu_accept.paths import target_tools
from npu_accept.profile import FileInput, ModelSpec, Profile, RandomInput
from npu_accept.transport import CommandTimeout, Connection, TransportError, parse_target

INFO_TIMEOUT_S = 60.0
RUN_TIMEOUT_S = 600.0


@dataclass(frozen=True)
class Access:
    """How to reach the boards: the SSH options shared by every target."""

    identity: Path | None
    known_hosts: Path | None
    accept_new_host_key: bool
    connect_timeout: float = 15.0


def board_dir_name(target: str) -> str:
    """A file-system-safe name for one target's artifacts."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", target)


def make_inputs(spec: ModelSpec) -> list[np.ndarray]:
    """The input tensors of a model: seeded random data or the profile's .npy files."""
    arrays = []
    for item in spec.inputs:
        if isinstance(item, FileInput):
            arrays.append(np.load(item.path, allow_pickle=False))
        else:
            arrays.append(_random(item))
    return arrays


def _random(item: RandomInput) -> np.ndarray:
    rng = np.random.default_rng(item.seed)
    dtype = np.dtype(item.dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        low, high = max(int(item.low), info.min), min(int(item.high), info.max)
        return rng.integers(low, high, size=item.shape, endpoint=True, dtype=dtype)
    return rng.uniform(item.low, item.high, size=item.shape).astype(dtype)


class BoardLink(Protocol):
    """What collection needs from a connection to a board: `npu_accept.transport.Connection`, or an
    adapter (e.g. over oeqa's target) with the same methods."""

    def run(self, cmd: str, timeout: float) -> Any: ...
    def put(self, local: Path, remote: str) -> None: ...
    def get(self, remote: str, local: Path) -> None: ...
    def make_temp_dir(self) -> str: ...


def collect_board(
    target: str, profile: Profile, access: Access, artifacts: Path, baseline: dict[str, Any] | None = None
) -> BoardFacts:
    """All facts of one board; connection problems end up in `collect_error` as one sentence."""
    started = time.monotonic()
    try:
        connection = Connection.open(
            parse_target(target),
            identity=access.identity,
            known_hosts=access.known_hosts,
            accept_new_host_key=access.accept_new_host_key,
            connect_timeout=access.connect_timeout,
        )
    except TransportError as exc:
        return BoardFacts(target=target, baseline=baseline, collect_error=str(exc))
    connected = time.monotonic()
    try:
        facts = collect_over(connection, target, profile, artifacts, baseline)
    finally:
        try:
            connection.close()  # also removes the board's temp dir
        except TransportError:
            pass  # the board is gone; its temp dir goes with the next reboot
    facts.timings = {
        "connect": connected - started,
        **facts.timings,
        "close": time.monotonic() - connected - sum(facts.timings.values()),
    }
    facts.collect_seconds = time.monotonic() - started
    return facts


def collect_over(
    link: BoardLink, target: str, profile: Profile, artifacts: Path, baseline: dict[str, Any] | None = None
) -> BoardFacts:
    """All facts of one board over an open link (the caller closes it and so removes the temp dir)."""
    facts = BoardFacts(target=target, baseline=baseline)
    out_dir = artifacts / board_dir_name(target)
    out_dir.mkdir(parents=True, exist_ok=True)
    clock = time.monotonic()

    def lap(phase: str) -> None:
        nonlocal clock
        now = time.monotonic()
        facts.timings[phase] = facts.timings.get(phase, 0.0) + now - clock
        clock = now

    try:
        remote = link.make_temp_dir()
        _upload_tools(link, remote)
        lap("upload")
        _collect_info(link, remote, facts, out_dir)
        lap("npu-info")
        for spec in profile.models:
            facts.models.append(_collect_model(link, remote, spec, profile, out_dir))
            lap(f"model {spec.name}")
        for collector in collectors(profile.family):
            facts.extra.update(
                collector(connection=link, remote_dir=remote, facts=facts, profile=profile, artifacts=out_dir)
            )
        lap("family collectors")
    except TransportError as exc:
        facts.collect_error = f"Board {target} could not be examined: {exc}"
    (out_dir / "timings.json").write_text(json.dumps(facts.timings, indent=2) + "\n")
    return facts


def _upload_tools(connection: BoardLink, remote: str) -> None:
    files = target_tools().files()
    dirs = sorted({str(Path(rel).parent) for rel in files} - {"."})
    if dirs:
        mkdir = "mkdir -p " + " ".join(shlex.quote(f"{remote}/{d}") for d in dirs)
        _checked(connection, mkdir, INFO_TIMEOUT_S)
    for rel, path in files.items():
        connection.put(path, f"{remote}/{rel}")


def _checked(connection: BoardLink, command: str, timeout: float) -> Any:
    result = connection.run(command, timeout=timeout)
    if result.exit_code != 0:
        raise TransportError(
            f"command '{command}' failed on the board with status {result.exit_code}: "
            f"{result.stderr.decode(errors='replace').strip()[:200]}"
        )
    return result


def _collect_info(connection: BoardLink, remote: str, facts: BoardFacts, out_dir: Path) -> None:
    result = connection.run(f"python3 {shlex.quote(remote)}/npu-info --json", timeout=INFO_TIMEOUT_S)
    (out_dir / "npu-info.json").write_bytes(result.stdout)
    (out_dir / "npu-info.stderr.txt").write_bytes(result.stderr)
    try:
        data = json.loads(result.stdout)
        if not isinstance(data, dict):
            raise ValueError("not an object")
        facts.info = data
    except ValueError:
        tail = result.stderr.decode(errors="replace").strip().splitlines()
        facts.info_error = (
            f"npu-info exited with status {result.exit_code} and printed no JSON"
            + (f" ({tail[-1]})" if tail else "")
            + "; check that python3 runs on the board"
        )


def _collect_model(
    connection: BoardLink, remote: str, spec: ModelSpec, profile: Profile, out_dir: Path
) -> ModelFacts:
    model_dir = out_dir / spec.name
    model_dir.mkdir(parents=True, exist_ok=True)
    remote_dir = f"{remote}/{spec.name}"
    _checked(
        connection, f"mkdir -p {shlex.quote(remote_dir)}/npu {shlex.quote(remote_dir)}/cpu", INFO_TIMEOUT_S
    )
    remote_inputs = []
    for index, array in enumerate(make_inputs(spec)):
        local = model_dir / f"in{index}.npy"
        np.save(local, array, allow_pickle=False)
        remote_inputs.append(f"{remote_dir}/in{index}.npy")
        connection.put(local, remote_inputs[-1])
    facts = ModelFacts(spec=spec, golden=[np.load(g, allow_pickle=False) for g in spec.golden])
    delegate_args: list[str] = []
    if spec.backend == "tflite-delegate" and profile.delegate is not None:
        delegate_args = ["--delegate", profile.delegate.path]
        for key, value in profile.delegate.options.items():
            delegate_args += ["--delegate-option", f"{key}={value}"]
    facts.npu = _run(
        connection,
        remote,
        spec.path,
        spec.backend,
        delegate_args,
        remote_inputs,
        f"{remote_dir}/npu",
        model_dir / "npu",
        profile,
    )
    # The CPU reference: the unconverted model (or, for TFLite, the same file) on tflite-cpu. A
    # vendor format (.rknn, .cvimodel) has no CPU twin unless the profile names a reference.
    if profile.has_npu and (spec.reference or spec.backend.startswith("tflite")):
        facts.cpu = _run(
            connection,
            remote,
            spec.reference or spec.path,
            "tflite-cpu",
            [],
            remote_inputs,
            f"{remote_dir}/cpu",
            model_dir / "cpu",
            profile,
        )
    return facts


def _run(
    connection: BoardLink,
    remote: str,
    model: str,
    backend: str,
    extra: list[str],
    inputs: list[str],
    remote_out: str,
    local_out: Path,
    profile: Profile,
) -> RunFacts:
    local_out.mkdir(parents=True, exist_ok=True)
    argv = [
        "python3",
        f"{remote}/npu-run",
        "--model",
        model,
        "--input",
        *inputs,
        "--output-dir",
        remote_out,
        "--backend",
        backend,
        *extra,
        "--runs",
        str(profile.performance.runs),
        "--warmup",
        str(profile.performance.warmup),
        "--json",
    ]
    command = " ".join(shlex.quote(a) for a in argv)
    try:
        result = connection.run(command, timeout=RUN_TIMEOUT_S)
    except CommandTimeout:
        # A hung NPU job is a verdict on this run, not on the board's reachability.
        return RunFacts(
            backend=backend,
            model_path=model,
            exit_code=None,
            report=None,
            error=f"npu-run --backend {backend} on {model} did not finish within "
            f"{RUN_TIMEOUT_S:.0f} s (the NPU job hangs)",
        )
    stderr = result.stderr.decode(errors="replace")
    (local_out / "npu-run.json").write_bytes(result.stdout)
    (local_out / "npu-run.stderr.txt").write_text(stderr)
    run = RunFacts(backend=backend, model_path=model, exit_code=result.exit_code, report=None, stderr=stderr)
    try:
        report = json.loads(result.stdout)
        run.report = report if isinstance(report, dict) else None
    except ValueError:
        run.report = None
    if run.report is None:
        tail = stderr.strip().splitlines()
        run.error = (
            f"npu-run --backend {backend} on {model} exited with status {result.exit_code} "
            f"without JSON" + (f" ({tail[-1]})" if tail else "")
        )
        return run
    if result.exit_code == 0:
        for index, output in enumerate(run.report.get("outputs") or []):
            name = str(output.get("file") or f"out{index}.npy")
            source = name if name.startswith("/") else f"{remote_out}/{name}"
            local = local_out / Path(name).name
            connection.get(source, local)
            run.outputs.append(np.load(local, allow_pickle=False))
    return run

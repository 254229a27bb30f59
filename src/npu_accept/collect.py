# SPDX-License-Identifier: MIT
"""Gather the facts of one board over SSH: send the on-target tools, run npu-info, run every
profile model through the NPU and the CPU, pull the output tensors.

The suite always runs the repository's own npu-run/npu-info (and the npu_target package) from a
temp dir on the board, whatever the image has installed: the checks then judge the board with the
tools under review, and a board with old or missing tools can still be accepted.

Few round trips: the tools travel as one archive on the stdin of the npu-info command (with
``keep_tools`` they stay on the board under a name that is their content hash, and a board that
already holds them is not sent them again); each model run carries its inputs the same way; the
output tensors of every run come back in one tar stream at the end.

The board is untrusted: every command's output is bounded (:class:`Limits`), npu-info/npu-run
reports are validated (`npu_accept.untrusted`), output names the board chose are checked and the
files are saved under the suite's own names, .npy headers are checked before loading. Anything
that goes wrong while examining a board becomes that board's `collect_error`, one sentence.
"""

from __future__ import annotations

import hashlib
import io
import json
import posixpath
import re
import shlex
import statistics
import tarfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from npu_accept import daemon_restart, npyio
from npu_accept.artifacts import keep
from npu_accept.boardlink import BoardLink, Limits, run_bounded
from npu_accept.boardlock import board_lock
from npu_accept.checks import roster
from npu_accept.checks.registry import collectors
from npu_accept.collectors import governors
from npu_accept.facts import BoardFacts, ModelFacts, RunFacts, Work
from npu_accept.inputs import make_inputs
from npu_accept.memo import shared
from npu_accept.paths import target_tools
from npu_accept.profile import ModelSpec, Profile
from npu_accept.trace import FILE_NAME as TRACE_FILE
from npu_accept.trace import Trace, TracedLink
from npu_accept.transport import (
    CommandTimeout,
    Connection,
    OutputFlood,
    TransportError,
    parse_target,
    tar_files,
    visible,
)
from npu_accept.untrusted import BoardDataError, output_name, validated

INFO_TIMEOUT_S = 60.0
RECOVERY_SH = f"{{ {governors.recovery_sh()}; {daemon_restart.recovery_sh()}; }} >/dev/null 2>&1"
RUN_TIMEOUT_S = 600.0
_TOOLS_MISSING = "npu-accept-tools-missing"
_UPLOAD_SHORT = "the upload of the tools ended short"


@dataclass(frozen=True)
class Access:
    """How to reach the boards: the SSH options shared by every target."""

    identity: Path | None
    known_hosts: Path | None
    accept_new_host_key: bool
    connect_timeout: float = 15.0


@dataclass(frozen=True)
class Options:
    """How the suite treats each board beyond SSH."""

    keep_tools: bool = False  # leave the tools on the board (under their content hash) for next time
    limits: Limits = field(default_factory=Limits)
    checks: frozenset[str] | None = None  # the selected checks (None: all): only what they need is run


@dataclass(frozen=True)
class ToolsArchive:
    """The on-target tools as one tar, named by the sha256 of its bytes."""

    data: bytes
    digest: str
    top_level: tuple[str, ...]  # the archive's top-level entries (npu-run, npu-info, npu_target)
    last: str = ""  # the archive's last regular file: extracted only when the whole stream arrived

    @property
    def dirname(self) -> str:
        return f"npu-accept-tools-{self.digest[:16]}"


@shared()
def tools_archive() -> ToolsArchive:
    """The on-target tools (`npu_accept.paths.target_tools`) as a deterministic archive, built
    once per process."""
    data = tar_files(target_tools().files())
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        members = tar.getmembers()
    top = sorted({member.name.split("/", 1)[0] for member in members})
    last = [member.name for member in members if member.isreg()][-1]
    return ToolsArchive(data, hashlib.sha256(data).hexdigest(), tuple(top), last)


def _golden(path: Path) -> np.ndarray:
    """A golden output of the profile, read once for all boards (read-only: the boards share it)."""
    stat = Path(path).stat()
    return _golden_of(Path(path), stat.st_mtime_ns, stat.st_size)


@shared()
def _golden_of(path: Path, mtime_ns: int, size: int) -> np.ndarray:
    array = npyio.load(path)
    array.flags.writeable = False
    return array


def board_dir_name(target: str) -> str:
    """A file-system-safe name for one target's artifacts."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", target)


def collect_board(
    target: str,
    profile: Profile,
    access: Access,
    artifacts: Path,
    baseline: dict[str, Any] | None = None,
    options: Options | None = None,
) -> BoardFacts:
    """All facts of one board; whatever goes wrong ends up in `collect_error` as one sentence."""
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
        facts = BoardFacts(target=target, baseline=baseline, collect_error=str(exc), unreachable=True)
        facts.work.append(Work(time.monotonic() - started))
        return facts
    connected = time.monotonic()
    try:
        facts = collect_over(connection, target, profile, artifacts, baseline, options, write_timings=False)
    finally:
        try:
            connection.close()  # also removes the board's temp dir
        except TransportError:
            pass  # the link is gone: the next connection to the board removes the temp dir
    facts.timings = {
        "connect": connected - started,
        **facts.timings,
        "close": time.monotonic() - connected - sum(facts.timings.values()),
    }
    facts.work += [Work(facts.timings["connect"]), Work(facts.timings["close"])]
    facts.collect_seconds = time.monotonic() - started
    _write_timings(facts, artifacts / board_dir_name(target))
    return facts


def collect_over(
    link: BoardLink,
    target: str,
    profile: Profile,
    artifacts: Path,
    baseline: dict[str, Any] | None = None,
    options: Options | None = None,
    *,
    write_timings: bool = True,
) -> BoardFacts:
    """All facts of one board over an open link (the caller closes it and so removes the temp dir);
    timings.json is written unless the caller adds its own phases and writes it."""
    options = options or Options()
    facts = BoardFacts(target=target, baseline=baseline)
    out_dir = artifacts / board_dir_name(target)
    trace: Trace | None = None
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        trace = Trace(out_dir / TRACE_FILE, target)
        traced = TracedLink(link, trace)
        # One examination of a board at a time; first, put back what a killed run left changed.
        with board_lock(traced, recover=RECOVERY_SH):
            _examine(traced, profile, options, facts, out_dir)
    except Exception as exc:  # noqa: BLE001 - one board's trouble is that board's verdict, never the run's
        facts.collect_error = f"Board {target} could not be examined: {_sentence(exc)}"
    finally:
        if trace is not None:
            trace.close()
    if write_timings:
        _write_timings(facts, out_dir)
    return facts


def _examine(link: BoardLink, profile: Profile, options: Options, facts: BoardFacts, out_dir: Path) -> None:
    clock = time.monotonic()

    def lap(phase: str, serves: frozenset[str] | None = None, timed: float = 0.0) -> None:
        """The time since the last lap is `phase`'s (timings.json) and served `serves`; `timed`
        seconds of it were the timed loop, which only the performance check needs."""
        nonlocal clock
        now = time.monotonic()
        seconds = now - clock
        facts.timings[phase] = facts.timings.get(phase, 0.0) + seconds
        timed = min(timed, seconds)
        facts.work.append(Work(seconds - timed, serves))
        if timed:
            facts.work.append(Work(timed, roster.serving(roster.TIMED_RUNS)))
        clock = now

    needs = roster.needs_of(options.checks)
    remote = _collect_info(link, facts, out_dir, options)
    lap("npu-info")
    if roster.MODELS in needs:
        runs: list[tuple[RunFacts, str, Path]] = []
        for index, spec in enumerate(profile.models):
            model, model_runs = _collect_model(link, remote, index, spec, profile, out_dir, options)
            facts.models.append(model)
            runs.extend(model_runs)
            loop = profile.performance.warmup if roster.TIMED_RUNS in needs else None
            lap(
                f"model {spec.name}", roster.serving(roster.MODELS), _timed_loop([model.npu, model.cpu], loop)
            )
        _fetch_outputs(link, remote, runs, options.limits)
        lap("outputs", roster.serving(roster.MODELS))
    chosen = collectors(profile.family, options.checks)
    for collector in chosen:
        facts.extra.update(
            collector.function(
                connection=link, remote_dir=remote, facts=facts, profile=profile, artifacts=out_dir
            )
        )
        lap("family collectors", collector.serves)
    if not chosen:
        lap("family collectors")


def _timed_loop(runs: list[RunFacts | None], warmup: int | None) -> float:
    """How long the timed loop of these npu-runs took beyond the one run every model check needs,
    from the board's own latencies: the later timed runs and the warm-up (None: not timed)."""
    if warmup is None:
        return 0.0
    seconds = 0.0
    for run in runs:
        latencies = run.latencies_ms if run is not None else []
        if latencies:
            seconds += (sum(latencies[1:]) + warmup * statistics.median(latencies)) / 1000
    return seconds


def _write_timings(facts: BoardFacts, out_dir: Path) -> None:
    """timings.json, if it can be written: on a full disk the verdicts matter more."""
    if out_dir.is_dir():
        keep(out_dir / "timings.json", json.dumps(facts.timings, indent=2) + "\n")


def _sentence(exc: BaseException) -> str:
    """One sentence for whatever stopped the examination of a board."""
    if isinstance(exc, (TransportError, BoardDataError, npyio.NpyError)):
        return str(exc).rstrip(".")
    if isinstance(exc, MemoryError):
        return "the host ran out of memory holding the board's data; lower the limits or free memory"
    if isinstance(exc, OSError):
        return f"the suite could not write its artifacts ({visible(exc.strerror or exc)}); check --artifacts"
    return (
        f"an unexpected {type(exc).__name__} ({visible(exc)}) stopped the suite; report it with "
        "the board's artifacts"
    )


def upload_tools(link: BoardLink, remote: str) -> None:
    """The on-target tools into ``remote`` on the board, as one archive (one round trip)."""
    result = run_bounded(
        link, f"tar -xof - -C {shlex.quote(remote)}", INFO_TIMEOUT_S, input=tools_archive().data
    )
    if result.exit_code != 0:
        raise TransportError(
            f"The on-target tools could not be unpacked on the board ({_last_line(result.stderr)}); check "
            "that tar runs there and its /tmp has room."
        )


def _last_line(stderr: bytes) -> str:
    lines = stderr.decode("utf-8", "replace").strip().splitlines()
    return visible(lines[-1]) if lines else "no message"


def _in_new_temp_dir(
    link: BoardLink, script: str, limits: Limits, data: bytes | None = None
) -> tuple[str, Any]:
    """The board's temp dir for this examination, made by the same command that runs ``script``
    (one round trip over SSH; the script finds it in $NPU_ACCEPT_TMP)."""
    return link.run_in_temp_dir(script, timeout=INFO_TIMEOUT_S, input=data, **limits.command_bounds())


def _collect_info(link: BoardLink, facts: BoardFacts, out_dir: Path, options: Options) -> str:
    """Make the board's temp dir, bring the tools into it (one archive, unless the board keeps
    this exact version) and run npu-info, in one command; the temp dir's path."""
    archive = tools_archive()
    info = 'exec python3 "$NPU_ACCEPT_TMP"/npu-info --json'
    if options.keep_tools:
        tools = f'"${{NPU_ACCEPT_TMP%/*}}"/{shlex.quote(archive.dirname)}'
        links = " ".join(f"{tools}/{shlex.quote(name)}" for name in archive.top_level)
        present = f'if [ -f {tools}/.complete ]; then ln -sf {links} "$NPU_ACCEPT_TMP"/ && {info}; fi; '
        script = present + f"echo {_TOOLS_MISSING} >&2; exit 97"
        remote, result = _in_new_temp_dir(link, script, options.limits)
        if result.exit_code == 97 and _TOOLS_MISSING.encode() in result.stderr:
            install = f"NPU_ACCEPT_TMP={shlex.quote(remote)}; {_install_sh(tools, archive)} && "
            result = run_bounded(
                link,
                install + f'ln -sf {links} "$NPU_ACCEPT_TMP"/ && {info}',
                INFO_TIMEOUT_S,
                options.limits,
                archive.data,
            )
    else:
        script = f'tar -xof - -C "$NPU_ACCEPT_TMP" && {info}'
        remote, result = _in_new_temp_dir(link, script, options.limits, archive.data)
    keep(out_dir / "npu-info.json", result.stdout)
    keep(out_dir / "npu-info.stderr.txt", result.stderr, bulky=True)
    try:
        facts.info = validated(result.stdout, "npu-info", "npu-info")
    except BoardDataError as exc:
        tail = result.stderr.decode(errors="replace").strip().splitlines()
        full = next((line for line in tail if "No space left on device" in line), None)
        facts.info_error = (
            f"{str(exc).rstrip('.')} (exit status {result.exit_code}"
            + (f", last line on stderr: {visible(tail[-1])}" if tail else "")
            + "); check that python3 runs on the board"
        )
        if any(_UPLOAD_SHORT in line for line in tail):
            facts.info_error = (
                "the upload of the on-target tools ended short (--keep-tools: nothing of it is kept "
                "on the board); run again, and check the link if it happens again"
            )
        if full is not None:  # the tools could not even be unpacked
            facts.info_error = (
                f"the board's /tmp is full (No space left on device: {visible(full)}); the suite "
                "could not unpack its tools there: free space in the board's /tmp (df /tmp)"
            )
        raise BoardDataError(facts.info_error) from None
    return remote


def _install_sh(tools: str, archive: ToolsArchive) -> str:
    """Board-side shell: unpack the tools archive on stdin into the kept directory ``tools``
    (--keep-tools), through a `.part.$$` directory that is renamed only when whole.

    Run under the board lock. Nothing partial stays: the `.part` directories of killed runs
    (their shell gone) are removed first; an upload that ends short is removed, also one cut
    between two members, which tar takes for the archive's end (the last member is missing);
    and a `.part` moved into a directory another install made meanwhile is removed from it.
    """
    last = shlex.quote(archive.last)
    return (
        f"t={tools}; p=$t.part.$$; "
        'for o in "${t%/*}"/npu-accept-tools-*.part.*; do q=${o##*.}; case "$q" in ""|*[!0-9]*) ;; '
        '*) [ -d "/proc/$q" ] || rm -rf "$o";; esac; done; '
        'rm -rf "$p" "$t" && mkdir -p "$p" && '
        f'{{ {{ tar -xof - -C "$p" && [ -f "$p"/{last} ]; }} || {{ rm -rf "$p"; '
        f"echo 'npu-accept: {_UPLOAD_SHORT}; nothing of it is kept' >&2; exit 1; }}; }} && "
        'touch "$p/.complete" && mv "$p" "$t" && rm -rf "$t/${p##*/}"'
    )


def _collect_model(
    link: BoardLink,
    remote: str,
    index: int,
    spec: ModelSpec,
    profile: Profile,
    out_dir: Path,
    options: Options,
) -> tuple[ModelFacts, list[tuple[RunFacts, str, Path]]]:
    """Both runs of one model; returns the facts and the runs whose outputs are to be fetched."""
    model_dir = out_dir / spec.name
    model_dir.mkdir(parents=True, exist_ok=True)
    work = f"{remote}/m{index}"
    inputs = io.BytesIO()
    remote_inputs = []
    with tarfile.open(fileobj=inputs, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for number, array in enumerate(make_inputs(spec)):
            local = model_dir / f"in{number}.npy"
            data = io.BytesIO()
            np.save(data, array, allow_pickle=False)
            keep(local, data.getvalue(), bulky=True)
            member = tarfile.TarInfo(local.name)
            member.size, member.mode, member.mtime = len(data.getvalue()), 0o644, int(time.time())
            data.seek(0)
            tar.addfile(member, data)
            remote_inputs.append(f"{work}/{local.name}")
    facts = ModelFacts(spec=spec, golden=[_golden(g) for g in spec.golden], remote_inputs=remote_inputs)
    delegate_args: list[str] = []
    if spec.backend == "tflite-delegate" and profile.delegate is not None:
        delegate_args = ["--delegate", profile.delegate.path]
        for key, value in profile.delegate.options.items():
            delegate_args += ["--delegate-option", f"{key}={value}"]
    prepare = f"mkdir -p {shlex.quote(work)} && tar -xof - -C {shlex.quote(work)} && "
    # Without the performance check one run is enough: outputs, delegation and pairing need no timing.
    timed = options.checks is None or roster.TIMED_RUNS in roster.needs_of(options.checks)
    runs_warmup = (profile.performance.runs, profile.performance.warmup) if timed else (1, 0)
    npu = _ToolRun(
        spec.path, spec.backend, delegate_args, remote_inputs, f"{work}/npu", model_dir / "npu", *runs_warmup
    )
    facts.npu = npu.run(link, remote, profile, options.limits, prepare, inputs.getvalue())
    fetch = [(facts.npu, npu.remote_out, npu.local_out)]
    # The CPU reference: the unconverted model (or, for TFLite, the same file) on tflite-cpu. A
    # vendor format (.rknn, .cvimodel) has no CPU twin unless the profile names a reference.
    if profile.has_npu and (spec.reference or spec.backend.startswith("tflite")):
        cpu = _ToolRun(
            spec.reference or spec.path,
            "tflite-cpu",
            [],
            remote_inputs,
            f"{work}/cpu",
            model_dir / "cpu",
            *runs_warmup,
        )
        facts.cpu = cpu.run(link, remote, profile, options.limits)
        fetch.append((facts.cpu, cpu.remote_out, cpu.local_out))
    return facts, [(run, out, local) for run, out, local in fetch if run.ok]


@dataclass(frozen=True)
class _ToolRun:
    """One npu-run invocation on the board."""

    model: str
    backend: str
    extra: list[str]
    inputs: list[str]
    remote_out: str
    local_out: Path
    runs: int
    warmup: int

    def command(self, remote: str, profile: Profile) -> str:
        argv = [
            "python3",
            f"{remote}/npu-run",
            "--model",
            self.model,
            "--input",
            *self.inputs,
            "--output-dir",
            self.remote_out,
            "--backend",
            self.backend,
            *self.extra,
            "--runs",
            str(self.runs),
            "--warmup",
            str(self.warmup),
            "--json",
        ]
        return "exec " + " ".join(shlex.quote(a) for a in argv) + " </dev/null"

    def run(
        self,
        link: BoardLink,
        remote: str,
        profile: Profile,
        limits: Limits,
        prepare: str = "",
        data: bytes | None = None,
    ) -> RunFacts:
        self.local_out.mkdir(parents=True, exist_ok=True)
        what = f"npu-run --backend {self.backend} on {self.model}"
        try:
            result = run_bounded(link, prepare + self.command(remote, profile), RUN_TIMEOUT_S, limits, data)
        except OutputFlood as exc:
            return self._failed(f"{str(exc).rstrip('.')} ({what})")
        except CommandTimeout:
            # A hung NPU job is a verdict on this run, not on the board's reachability.
            return self._failed(f"{what} did not finish within {RUN_TIMEOUT_S:.0f} s (the NPU job hangs)")
        stderr = result.stderr.decode(errors="replace")
        keep(self.local_out / "npu-run.json", result.stdout)
        keep(self.local_out / "npu-run.stderr.txt", stderr, bulky=True)
        run = RunFacts(self.backend, self.model, result.exit_code, None, stderr=stderr)
        try:
            run.report = validated(result.stdout, "npu-run", what)
        except BoardDataError as exc:
            tail = stderr.strip().splitlines()
            run.error = (
                f"{str(exc).rstrip('.')} (exit status {result.exit_code}"
                + (f", last line on stderr: {visible(tail[-1])}" if tail else "")
                + ")"
            )
        return run

    def _failed(self, error: str) -> RunFacts:
        return RunFacts(backend=self.backend, model_path=self.model, exit_code=None, report=None, error=error)


def _fetch_outputs(
    link: BoardLink, remote: str, runs: list[tuple[RunFacts, str, Path]], limits: Limits
) -> None:
    """The output tensors of every successful run, in one tar stream, saved as out<N>.npy."""
    wanted: dict[str, tuple[RunFacts, int, Path]] = {}
    for run, remote_out, local_out in runs:
        what = f"npu-run --backend {run.backend} on {run.model_path}"
        try:
            names = [output_name(str(o["file"]), remote_out, what) for o in run.report["outputs"]]  # type: ignore[index]
        except BoardDataError as exc:
            run.error = str(exc).rstrip(".")
            continue
        for index, name in enumerate(names):
            member = posixpath.relpath(f"{remote_out}/{name}", remote)
            wanted[member] = (run, index, local_out / f"out{index}.npy")
    if not wanted:
        return
    received: dict[str, bytes] = {}
    try:
        arrived, problem = fetch_files(link, remote, {m: w[2] for m, w in wanted.items()}, limits, received)
    except OutputFlood:
        arrived, problem = (
            set(),
            f"the outputs exceed the limit of {limits.outputs_bytes >> 20} MiB per board",
        )
    for member, (run, index, local) in wanted.items():
        if run.error:
            continue
        if member not in arrived:
            run.error = (
                f"output {index} of npu-run --backend {run.backend} on {run.model_path} did not arrive "
                f"({problem})"
            )
            continue
        try:
            run.outputs.append(npyio.load_bytes(received[member], str(local), max_bytes=limits.outputs_bytes))
        except npyio.NpyError as exc:
            run.error = str(exc).rstrip(".")


def fetch_files(
    link: BoardLink,
    remote: str,
    wanted: dict[str, Path],
    limits: Limits | None = None,
    received: dict[str, bytes] | None = None,
) -> tuple[set[str], str]:
    """Files under ``remote`` (names relative to it) in one tar stream, each saved at its local
    path: the names that arrived, and what went wrong with the others (for a sentence). With
    ``received``, each arrived file's content is also kept there (no need to read it back).

    For collectors too: one round trip for any number of files, bounded by ``limits``. Raises
    OutputFlood when the stream exceeds the bound by far, TransportError when the link fails.
    """
    limits = limits or Limits()
    command = f"cd {shlex.quote(remote)} && exec tar -cf - -- " + " ".join(shlex.quote(m) for m in wanted)
    result = link.run(command, timeout=RUN_TIMEOUT_S, **limits.fetch_bounds())
    return _unpack(result.stdout, wanted, limits, received), _fetch_problem(result, limits)


def _fetch_problem(result: Any, limits: Limits) -> str:
    if getattr(result, "stdout_dropped", 0):
        return f"the outputs exceed the limit of {limits.outputs_bytes >> 20} MiB per board"
    tail = result.stderr.decode(errors="replace").strip().splitlines()
    return f"tar: {visible(tail[-1])}" if tail else f"tar exited with status {result.exit_code}"


def run_and_fetch(
    link: BoardLink, remote: str, script: str, top: str, timeout: float, limits: Limits | None = None
) -> tuple[dict[str, bytes], str]:
    """Run the shell ``script`` on the board, then bring back the regular files under
    ``remote/top`` in the same command's tar stream: one round trip for work that leaves its
    results in files. The files' contents by name relative to ``remote`` (bounded by ``limits``),
    and what went wrong if some are missing (for a sentence)."""
    limits = limits or Limits()
    command = f"{script}; cd {shlex.quote(remote)} && exec tar -cf - -- {shlex.quote(top)}"
    result = link.run(command, timeout=timeout, **limits.fetch_bounds())
    return _tar_members(result.stdout, limits, lambda name: True), _fetch_problem(result, limits)


def _unpack(
    stream: bytes, wanted: dict[str, Path], limits: Limits, received: dict[str, bytes] | None = None
) -> set[str]:
    """Save the wanted regular files of a tar stream at their local paths (their content also in
    ``received``, if given); the rest is ignored."""
    members = _tar_members(stream, limits, wanted.__contains__)
    for name, data in members.items():
        keep(wanted[name], data, bulky=True)  # evidence: a full disk drops it, never the verdict
        if received is not None:
            received[name] = data
    return set(members)


def _tar_members(stream: bytes, limits: Limits, keep: Callable[[str], bool]) -> dict[str, bytes]:
    """The regular files of a tar stream that ``keep`` names, each at most the outputs limit; a
    cut or garbled stream gives what arrived intact before the damage."""
    members: dict[str, bytes] = {}
    try:
        with tarfile.open(fileobj=io.BytesIO(stream), mode="r|") as tar:
            for member in tar:
                if not keep(member.name) or not member.isreg() or member.size > limits.outputs_bytes:
                    continue
                source = tar.extractfile(member)
                if source is not None:
                    members[member.name] = source.read()
    except (tarfile.TarError, EOFError, ValueError, UnicodeError):
        pass  # the rest is reported missing by the caller
    return members

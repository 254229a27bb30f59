# SPDX-License-Identifier: MIT
"""oeqa's target as the suite's transport, so `testimage` runs the suite's own collector and checks.

oeqa's SSH target (`oeqa.core.target.ssh.OESSHTarget`, TEST_TARGET = "simpleremote") offers
`run(cmd, timeout) -> (status, output)` with stderr merged into stdout, `copyTo` and `copyFrom`.
The collector needs stdout (JSON) and stderr (logs) apart and byte-exact, so each command's
streams go to files on the board and come back with `copyFrom`. Nothing here judges a board:
the facts go to `npu_accept.checks.registry.run_all`, exactly as in `pytest pytests`.
"""

from __future__ import annotations

import shlex
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from npu_accept import collect
from npu_accept.checks.base import CheckResult
from npu_accept.checks.registry import run_all
from npu_accept.facts import BoardFacts
from npu_accept.profile import Profile, ProfileError, load_profile
from npu_accept.transport import (
    DEFAULT_FLOOD_LIMIT,
    DEFAULT_MAX_OUTPUT,
    OutputFlood,
    Result,
    TransferError,
    TransportError,
)

_STATUS_MARK = "npu-accept-status:"


class OeqaTarget(Protocol):
    """What npu-accept uses of an oeqa target (OESSHTarget and friends)."""

    def run(self, command: str, timeout: int | None = None) -> tuple[int, str]: ...
    def copyTo(self, localSrc: str, remoteDst: str) -> Any: ...  # noqa: N802, N803 - oeqa's names
    def copyFrom(self, remoteSrc: str, localDst: str) -> Any: ...  # noqa: N802, N803


@dataclass
class OeqaConnection:
    """The subset of `npu_accept.transport.Connection` the collector uses, over an oeqa target."""

    oeqa: OeqaTarget
    target: str = "oeqa-target"
    _scratch: str | None = None
    _local: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="npu-oeqa-")))
    _temp_dirs: list[str] = field(default_factory=list)
    _count: int = 0

    def _raw(self, command: str, timeout: float) -> tuple[int, str]:
        status, output = self.oeqa.run(command, timeout=max(1, int(timeout)))
        return int(status), output or ""

    def _scratch_dir(self) -> str:
        if self._scratch is None:
            self._scratch = self.make_temp_dir("npu-oeqa")
        return self._scratch

    # The suite's output bounds and flood limits hold over oeqa too (collect.BoardLink): stdout is
    # cut on the board at the flood limit (the command dies of SIGPIPE, as over SSH it is killed),
    # stderr is measured there, and no stream comes back beyond `max_output`.

    def run(
        self,
        cmd: str,
        timeout: float,
        input: bytes | None = None,
        env: dict[str, str] | None = None,
        max_output: int = DEFAULT_MAX_OUTPUT,
        flood_limit: int = DEFAULT_FLOOD_LIMIT,
    ) -> Result:
        """Run `cmd` in the board's shell; stdout and stderr come back separately, as bytes, each at
        most `max_output`; more than `flood_limit` bytes on a stream is an OutputFlood."""
        scratch = self._scratch_dir()
        self._count += 1
        out, err, stdin, code = (
            shlex.quote(f"{scratch}/{self._count}.{name}") for name in ("out", "err", "in", "status")
        )
        redirect_in = "/dev/null"
        if input is not None:
            local_in = self._local / f"{self._count}.in"
            local_in.write_bytes(input)
            self.put(local_in, f"{scratch}/{self._count}.in")
            redirect_in = stdin
        exports = "".join(f"export {k}={shlex.quote(v)}; " for k, v in (env or {}).items())
        wrapped = (
            f"{exports}{{ ( {cmd}\n) 2>{err} <{redirect_in}; echo $? >{code}; }} "
            f"| head -c {flood_limit + 1} >{out}; "
            f"echo {_STATUS_MARK}$(cat {code} 2>/dev/null) $(wc -c <{out}) $(wc -c <{err})"
        )
        started = time.monotonic()
        status, output = self._raw(wrapped, timeout)
        duration = time.monotonic() - started
        marks = [line.split() for line in output.splitlines() if line.startswith(_STATUS_MARK)]
        if not marks or len(marks[-1]) != 3 or not all(f.isdigit() for f in marks[-1][1:]):
            raise TransportError(
                f"The oeqa target did not run `{cmd}` (status {status}: "
                f"{output.strip()[-200:]}); check TEST_TARGET_IP and SSH access."
            )
        mark, out_size, err_size = marks[-1][0], int(marks[-1][1]), int(marks[-1][2])
        exit_text = mark[len(_STATUS_MARK) :]
        exit_code = int(exit_text) if exit_text.isdigit() else 141  # no status: SIGPIPE took the shell
        try:
            stdout = self._fetch(f"{scratch}/{self._count}.out", out_size, max_output)
            stderr = self._fetch(f"{scratch}/{self._count}.err", err_size, max_output)
        finally:
            self._raw(f"rm -f {out} {err} {stdin} {code}", 30)
        if out_size > flood_limit or err_size > flood_limit:
            raise OutputFlood(
                f"Command {cmd[:80]!r} printed more than {flood_limit >> 20} MiB on {self.target} and "
                "was killed; the board floods its output, look at its console or kernel log.",
                stdout,
                stderr,
            )
        return Result(
            exit_code=exit_code,
            stdout=stdout,
            stderr=stderr,
            duration=duration,
            stdout_dropped=max(0, out_size - max_output),
            stderr_dropped=max(0, err_size - max_output),
        )

    def run_in_temp_dir(
        self,
        script: str,
        timeout: float,
        input: bytes | None = None,
        max_output: int = DEFAULT_MAX_OUTPUT,
        flood_limit: int = DEFAULT_FLOOD_LIMIT,
        prefix: str = "npu-accept",
    ) -> tuple[str, Result]:
        """A new temp dir (removed at close()) and `script` run with $NPU_ACCEPT_TMP set to it."""
        remote = self.make_temp_dir(prefix)
        command = f"NPU_ACCEPT_TMP={shlex.quote(remote)}; {script}"
        return remote, self.run(command, timeout, input, max_output=max_output, flood_limit=flood_limit)

    def _fetch(self, remote: str, size: int, cap: int) -> bytes:
        """The file's first `cap` bytes (cut on the board first when it is larger)."""
        if size > cap:
            quoted = shlex.quote(remote)
            self._raw(f"head -c {cap} {quoted} >{quoted}.cut && mv -f {quoted}.cut {quoted}", 60)
        local = self._local / Path(remote).name
        self.get(remote, local)
        data = local.read_bytes()[:cap]
        local.unlink()
        return data

    def put(self, local: Path, remote: str) -> None:
        local = Path(local)
        if local.is_dir():
            self._raw(f"mkdir -p {shlex.quote(remote)}", 60)
            for child in sorted(local.iterdir()):
                if child.name != "__pycache__":
                    self.put(child, f"{remote.rstrip('/')}/{child.name}")
            return
        result = self.oeqa.copyTo(str(local), remote)
        if isinstance(result, tuple) and result and result[0]:
            raise TransferError(f"Cannot upload {local} to the oeqa target at {remote} ({result[1]}).")

    def get(self, remote: str, local: Path) -> None:
        result = self.oeqa.copyFrom(remote, str(local))
        status = result[0] if isinstance(result, tuple) and result else 0
        if status or not Path(local).exists():
            raise TransferError(f"Cannot download {remote} from the oeqa target; check that it exists.")

    def make_temp_dir(self, prefix: str = "npu-accept") -> str:
        status, output = self._raw(f'mktemp -d "${{TMPDIR:-/tmp}}/{prefix}.XXXXXX"', 30)
        path = output.strip().splitlines()[-1] if output.strip() else ""
        if status != 0 or not path.startswith("/"):
            raise TransportError(f"mktemp -d failed on the oeqa target ({output.strip()[-200:]}).")
        self._temp_dirs.append(path)
        return path

    def close(self) -> None:
        if self._temp_dirs:
            self._raw("rm -rf -- " + " ".join(shlex.quote(d) for d in self._temp_dirs), 60)
            self._temp_dirs.clear()
        self._scratch = None


def collect_via_oeqa(connection: OeqaConnection, label: str, profile: Profile, artifacts: Path) -> BoardFacts:
    """The suite's own collection (collect.collect_over) over the oeqa adapter, then its cleanup."""
    started = time.monotonic()
    try:
        facts = collect.collect_over(connection, label, profile, artifacts)
    finally:
        try:
            connection.close()
        except TransportError:
            pass  # the board is gone; its temp dir goes with the next reboot
    facts.collect_seconds = time.monotonic() - started
    return facts


@dataclass(frozen=True)
class OeqaVerdict:
    profile: Profile
    facts: BoardFacts
    results: dict[str, CheckResult]


def accept(
    oeqa_target: OeqaTarget,
    profile_name: str,
    artifacts: Path,
    label: str = "oeqa-target",
    profile_dirs: Sequence[Path] | None = None,
) -> OeqaVerdict:
    """Examine the board behind an oeqa target and judge the ten checks."""
    try:
        profile = load_profile(profile_name, profile_dirs)
    except ProfileError as exc:
        raise ValueError(str(exc)) from None
    connection = OeqaConnection(oeqa_target, target=label)
    facts = collect_via_oeqa(connection, label, profile, artifacts)
    return OeqaVerdict(profile, facts, run_all(facts, profile))

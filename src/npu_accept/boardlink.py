# SPDX-License-Identifier: MIT
"""The board link: what collection needs from a connection to a board, the bounds the suite keeps
of one board, and the one way a command is run with them.

Apart from collect.py so that the collectors (which collect.py reaches through the check registry)
use the same bounded run without importing collect.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypedDict, runtime_checkable


class Bounds(TypedDict):
    """A command's output bounds, as BoardLink.run and run_in_temp_dir take them."""

    max_output: int  # bytes kept of each stream
    flood_limit: int  # bytes after which the command is killed


@dataclass(frozen=True)
class Limits:
    """What the suite keeps of one board (docs/limits.md states the host memory they bound)."""

    report_bytes: int = 1 << 20  # stdout of npu-info / npu-run: one JSON report
    log_bytes: int = 1 << 20  # stderr of each tool run
    flood_bytes: int = 64 << 20  # a command printing more than this is killed
    outputs_bytes: int = 128 << 20  # all output tensors of one board, fetched in one stream

    def command_bounds(self) -> Bounds:
        """A command's bounds, as BoardLink.run and run_in_temp_dir take them."""
        return {"max_output": max(self.report_bytes, self.log_bytes), "flood_limit": self.flood_bytes}

    def fetch_bounds(self) -> Bounds:
        """The bounds of a tar stream of output files (outputs_bytes, then the flood margin)."""
        return {"max_output": self.outputs_bytes, "flood_limit": self.outputs_bytes + self.flood_bytes}


@runtime_checkable
class BoardLink(Protocol):
    """What collection needs from a connection to a board: `npu_accept.transport.Connection`, or an
    adapter (npu_accept.lab.oeqa_bridge over oeqa's target) with the same methods. The output
    bounds and flood limits are the link's own (run takes `max_output` and `flood_limit`, and
    `run_in_temp_dir` makes the examination's temp dir and runs a script in it); collection never
    asks which class it is."""

    def run(
        self, cmd: str, timeout: float, input: bytes | None = None, *, max_output: int, flood_limit: int
    ) -> Any: ...
    def run_in_temp_dir(
        self, script: str, timeout: float, input: bytes | None = None, *, max_output: int, flood_limit: int
    ) -> tuple[str, Any]: ...
    def put(self, local: Path, remote: str) -> None: ...
    def get(self, remote: str, local: Path) -> None: ...
    def make_temp_dir(self) -> str: ...


def run_bounded(
    link: BoardLink, command: str, timeout: float, limits: Limits | None = None, input: bytes | None = None
) -> Any:
    """COMMAND on the board with the suite's bounds on what it may print (a flood is cut, not buffered)."""
    return link.run(command, timeout=timeout, input=input, **(limits or Limits()).command_bounds())

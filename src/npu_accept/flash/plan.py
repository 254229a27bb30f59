# SPDX-License-Identifier: MIT
"""A flashing plan: the exact commands, printed for --dry-run or run one after the other."""

from __future__ import annotations

import shlex
import shutil
import subprocess
from dataclasses import dataclass, field
from typing import TextIO

from npu_accept.flash.errors import FlashError

INSTALL_HINTS = {
    "uuu": "install it with `apt-get install uuu` or from https://github.com/nxp-imx/mfgtools/releases",
    "rkdeveloptool": "install it with `apt-get install rkdeveloptool` or build "
    "https://github.com/rockchip-linux/rkdeveloptool",
    "bmaptool": "install it with `apt-get install bmap-tools`",
}


@dataclass(frozen=True)
class Step:
    argv: tuple[str, ...]
    why: str

    def shell(self) -> str:
        return shlex.join(self.argv)


@dataclass
class Plan:
    method: str
    steps: list[Step] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, why: str, *argv: str) -> None:
        self.steps.append(Step(tuple(argv), why))

    def print(self, stream: TextIO) -> None:
        for note in self.notes:
            stream.write(f"# {note}\n")
        for step in self.steps:
            stream.write(f"# {step.why}\n{step.shell()}\n")

    def run(self, stream: TextIO) -> None:
        for step in self.steps:
            stream.write(f"+ {step.shell()}\n")
            stream.flush()
            # the tools draw their own progress bars; their output goes straight to the terminal
            result = subprocess.run(step.argv, check=False)
            if result.returncode != 0:
                raise FlashError(
                    f"`{step.shell()}` failed with exit status {result.returncode} "
                    f"({step.why}); "
                    "read its output above, fix the cause and run npu-flash again."
                )


def require_tool(name: str) -> str:
    """The path of a flashing tool, or one sentence on how to install it."""
    path = shutil.which(name)
    if path is None:
        raise FlashError(f"{name} is not installed; {INSTALL_HINTS.get(name, 'install it')}.")
    return path

# SPDX-License-Identifier: MIT
"""Progress bars that draw in place on a terminal and stay quiet in logs and CI."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from typing import TextIO


@dataclass
class Progress:
    """A byte-count progress bar; on a non-tty stream it prints one line at the end only."""

    label: str
    total: int
    stream: TextIO = field(default_factory=lambda: sys.stderr)
    width: int = 30
    done: int = 0
    _last_draw: float = 0.0
    _started: float = field(default_factory=time.monotonic)

    @property
    def interactive(self) -> bool:
        isatty = getattr(self.stream, "isatty", None)
        return bool(isatty and isatty())

    def advance(self, count: int) -> None:
        self.done += count
        now = time.monotonic()
        if self.interactive and (now - self._last_draw >= 0.1 or self.done >= self.total):
            self._last_draw = now
            self._draw()

    def _draw(self) -> None:
        fraction = 1.0 if self.total <= 0 else min(1.0, self.done / self.total)
        filled = int(fraction * self.width)
        bar = "#" * filled + "-" * (self.width - filled)
        self.stream.write(f"\r{self.label} [{bar}] {fraction * 100:5.1f}% {_human(self.done)}")
        self.stream.flush()

    def finish(self) -> None:
        elapsed = max(time.monotonic() - self._started, 1e-6)
        rate = _human(int(self.done / elapsed))
        if self.interactive:
            self._draw()
            self.stream.write(f"  {rate}/s\n")
        else:
            self.stream.write(f"{self.label}: {_human(self.done)} in {elapsed:.1f} s ({rate}/s)\n")
        self.stream.flush()


def _human(count: int) -> str:
    value = float(count)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.1f} {unit}" if unit != "B" else f"{count} B"
        value /= 1024
    return f"{count} B"

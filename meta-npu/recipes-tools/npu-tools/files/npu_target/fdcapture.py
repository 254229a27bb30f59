# SPDX-License-Identifier: MIT
"""Capture what native code writes to file descriptor 2 (the TFLite C++ runtime and delegates log there)."""

from __future__ import annotations

import os
import sys
import tempfile
from types import TracebackType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import IO


class StderrCapture:
    """Context manager: fd 2 goes to a temporary file; `text` holds it afterwards.

    With `echo`, the captured text is written to the real stderr on exit so a user still sees it.
    """

    def __init__(self, echo: bool = True) -> None:
        self.echo = echo
        self.text = ""
        self._saved_fd = -1
        self._tmp: IO[bytes] | None = None

    def __enter__(self) -> StderrCapture:
        sys.stderr.flush()
        self._tmp = tempfile.TemporaryFile()
        self._saved_fd = os.dup(2)
        os.dup2(self._tmp.fileno(), 2)
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        sys.stderr.flush()
        os.dup2(self._saved_fd, 2)
        os.close(self._saved_fd)
        assert self._tmp is not None
        self._tmp.seek(0)
        self.text = self._tmp.read().decode("utf-8", "replace")
        self._tmp.close()
        if self.echo:
            self.replay()

    def replay(self) -> None:
        """Write the captured text to the (restored) stderr."""
        if self.text:
            sys.stderr.write(self.text)
            sys.stderr.flush()

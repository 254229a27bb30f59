# SPDX-License-Identifier: MIT
"""Argument parsing shared by npu-run and npu-info: usage errors become one sentence and exit 2."""

from __future__ import annotations

import argparse
import os
import sys
from typing import NoReturn

from .errors import UsageError

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2


class SentenceParser(argparse.ArgumentParser):
    """argparse that raises UsageError instead of printing the usage block."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message}; see {self.prog} --help.")


def fail_usage(prog: str, error: UsageError) -> int:
    print(f"{prog}: {error}", file=sys.stderr)
    return EXIT_USAGE


def emit(text: str) -> bool:
    """Print to stdout; False (and no traceback at exit) when the reader went away, e.g. `| head`."""
    try:
        print(text)
        sys.stdout.flush()
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return False
    return True

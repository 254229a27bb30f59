# SPDX-License-Identifier: MIT
"""One examination of a board at a time: a lock on the board itself.

The lock is a symbolic link, `/tmp/.npu-accept-lock`, whose target text is the holder: the PID of
the sshd session process of the connection that took it (`$PPID` of a command's shell: it lives
as long as the connection, as for the temp dirs of npu_accept.transport) and who holds it
(host, process, time). `ln -s` creates it atomically or fails. A lock whose session process is
gone (a run killed, a link dropped) is stale and taken over. A second run waits a bounded time,
then refuses the board with one sentence naming the holder.
"""

from __future__ import annotations

import os
import re
import shlex
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from npu_accept.boardlink import run_bounded
from npu_accept.transport import TransportError, visible

LOCK_PATH = "/tmp/.npu-accept-lock"  # not "npu-accept.*": the temp dirs' names
WAIT_S = 60.0
POLL_S = 1.0
COMMAND_TIMEOUT_S = 30.0


class BoardBusy(TransportError):
    """Another run holds the board's lock; the message is one sentence naming it."""


def holder_text() -> str:
    """Who this run is, as the lock shows it to another run."""
    host = re.sub(r"[^A-Za-z0-9._-]", "_", socket.gethostname())[:64]
    return f"npu-accept on {host} (pid {os.getpid()}) since {time.strftime('%Y-%m-%d %H:%M:%S %Z')}"


def _acquire_script(holder: str, recover: str = "") -> str:
    """Take the lock (or print "held <holder>"); once taken, run `recover` (the board-side
    restoring of what a killed run left changed), then print "acquired"."""
    lock = shlex.quote(LOCK_PATH)
    return (
        f'v="$PPID {holder}"; l={lock}; got=0; '
        'if ln -s "$v" "$l" 2>/dev/null; then got=1; else '
        'o=$(readlink "$l" 2>/dev/null); p=${o%% *}; alive=0; '
        'case "$p" in ""|*[!0-9]*) ;; *) [ -d "/proc/$p" ] && alive=1;; esac; '
        'if [ "$alive" = 0 ]; then rm -f "$l"; ln -s "$v" "$l" 2>/dev/null && got=1; fi; fi; '
        f'if [ "$got" = 1 ]; then {recover or ":"}; echo acquired; '
        'else printf "held %s\\n" "$(readlink "$l" 2>/dev/null)"; fi'
    )


def _release_script(holder: str) -> str:
    lock = shlex.quote(LOCK_PATH)
    return f'l={lock}; [ "$(readlink "$l" 2>/dev/null)" = "$PPID {holder}" ] && rm -f "$l"; true'


def _text(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value or "")


def acquire(
    link: Any, holder: str, wait_s: float = WAIT_S, poll_s: float = POLL_S, recover: str = ""
) -> None:
    """Take the board's lock, waiting at most `wait_s` for another run's; BoardBusy otherwise.
    `recover` (shell) runs on the board in the same command once the lock is taken."""
    deadline = time.monotonic() + wait_s
    while True:
        out = _text(run_bounded(link, _acquire_script(holder, recover), COMMAND_TIMEOUT_S).stdout).strip()
        if out.endswith("acquired"):
            return
        if not out.startswith("held "):  # no /tmp, a read-only /tmp: nothing to lock with
            return
        if time.monotonic() >= deadline:
            other = out.removeprefix("held ").partition(" ")[2] or "another run"
            raise BoardBusy(
                f"the board is being examined by another run ({visible(other, 200)}, lock {LOCK_PATH}); "
                f"waited {wait_s:.0f} s: run again when it has ended"
            )
        time.sleep(poll_s)


def release(link: Any, holder: str) -> None:
    run_bounded(link, _release_script(holder), COMMAND_TIMEOUT_S)


@contextmanager
def board_lock(link: Any, wait_s: float = WAIT_S, recover: str = "") -> Iterator[None]:
    """Hold the board's lock for the block; released after it (a lost link leaves a stale lock,
    which the next run takes over). `recover`: shell run on the board right after taking it."""
    holder = holder_text()
    acquire(link, holder, wait_s, recover=recover)
    try:
        yield
    finally:
        try:
            release(link, holder)
        except Exception:  # noqa: BLE001 - the link is gone: the lock is stale and taken over next time
            pass

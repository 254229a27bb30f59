# SPDX-License-Identifier: MIT
"""A pytest plugin for benchmarks/bench_link.py --public-api: the suite's transport with paramiko's
public API only where it uses the private one for speed.

The transport opens each command's session channel ahead and sends the exec request without
asking for an answer (npu_accept.transport `_Helper`, `_send_open`, `_exec_request`), which uses
paramiko's private names. Loaded with `-p public_paramiko` (benchmarks/ on PYTHONPATH), this
plugin turns both off: every command opens its channel with `Transport.open_session()` and starts
with `Channel.exec_command()`, each waiting for the board's answer, as paramiko's own examples do.
The exit-signal handler stays: it is for correctness (a killed command), not speed.
"""

from __future__ import annotations

import paramiko

from npu_accept import transport


def _no_spare(self: object, transport_: paramiko.Transport, wait: float) -> None:
    return None


def _exec_with_reply(chan: paramiko.Channel, command: str) -> None:
    chan.exec_command(command)


def pytest_configure() -> None:
    transport._Helper.take = _no_spare  # type: ignore[method-assign,assignment]
    transport._exec_request = _exec_with_reply

# SPDX-License-Identifier: MIT
"""The silicon revision a running board reports, from its `npu-info --json` (OpenSSH client)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from npu_accept.flash.errors import FlashError
from npu_accept.transport import TransportError, parse_target


def revision_over_ssh(
    target: str, identity: Path | None = None, known_hosts: Path | None = None, timeout: float = 30.0
) -> str:
    """Run `npu-info --json` on USER@HOST[:PORT] and return its soc.revision (host key verified)."""
    try:
        parsed = parse_target(target)
    except TransportError as exc:
        raise FlashError(str(exc)) from None
    argv = ["ssh", "-o", "BatchMode=yes", "-o", f"ConnectTimeout={int(timeout)}", "-p", str(parsed.port)]
    if identity is not None:
        argv += ["-i", str(identity)]
    if known_hosts is not None:
        argv += ["-o", f"UserKnownHostsFile={known_hosts}"]
    argv += [f"{parsed.user}@{parsed.host}", "npu-info", "--json"]
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout + 30, check=False)
    except FileNotFoundError:
        raise FlashError(
            "The OpenSSH client (ssh) is not installed; apt-get install openssh-client, "
            "or pass --soc-revision instead of --target."
        ) from None
    except subprocess.TimeoutExpired:
        raise FlashError(
            f"`npu-info --json` on {target} did not answer in time; check the board, "
            "or pass --soc-revision instead."
        ) from None
    if proc.returncode != 0:
        reason = (proc.stderr.strip().splitlines() or [f"exit status {proc.returncode}"])[-1]
        raise FlashError(
            f"Cannot run npu-info on {target} ({reason}); check --target, --identity and "
            "--known-hosts, or pass --soc-revision instead."
        )
    try:
        data = json.loads(proc.stdout)
    except ValueError:
        raise FlashError(
            f"npu-info on {target} did not print JSON; update the image's npu-tools, "
            "or pass --soc-revision instead."
        ) from None
    revision = (data.get("soc") or {}).get("revision") if isinstance(data, dict) else None
    if not revision:
        raise FlashError(f"npu-info on {target} reports no SoC revision; pass --soc-revision instead.")
    return str(revision)

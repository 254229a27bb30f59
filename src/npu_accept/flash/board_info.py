"""The silicon revision a running board reports, from its `npu-info --json`."""
from __future__ import annotations

import json
import subprocess

from npu_accept.flash.errors import FlashError


def revision_over_ssh(target: str, identity: str | None = None, timeout: float = 30.0) -> str:
    """Run `npu-info --json` on USER@HOST[:PORT] with the OpenSSH client; return soc.revision."""
    user_host, _, port = target.rpartition(":") if target.count(":") == 1 else (target, "", "")
    argv = ["ssh", "-o", "BatchMode=yes", "-o", f"ConnectTimeout={int(timeout)}"]
    if port:
        argv += ["-p", port]
    if identity:
        argv += ["-i", identity]
    argv += [user_host or target, "npu-info", "--json"]
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout + 30, check=False)
    except FileNotFoundError:
        raise FlashError("The OpenSSH client (ssh) is not installed; apt-get install openssh-client, "
                         "or pass --soc-revision instead of --target.") from None
    except subprocess.TimeoutExpired:
        raise FlashError(f"`npu-info --json` on {target} did not answer in time; check the board, "
                         "or pass --soc-revision instead.") from None
    if proc.returncode != 0:
        reason = (proc.stderr.strip().splitlines() or [f"exit status {proc.returncode}"])[-1]
        raise FlashError(f"Cannot run npu-info on {target} ({reason}); check --target and the SSH key, "
                         "or pass --soc-revision instead.")
    try:
        data = json.loads(proc.stdout)
    except ValueError:
        raise FlashError(f"npu-info on {target} did not print JSON; update the image's npu-tools, "
                         "or pass --soc-revision instead.") from None
    revision = (data.get("soc") or {}).get("revision") if isinstance(data, dict) else None
    if not revision:
        raise FlashError(f"npu-info on {target} reports no SoC revision; pass --soc-revision instead.")
    return str(revision)

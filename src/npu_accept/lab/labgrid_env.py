# SPDX-License-Identifier: MIT
"""A labgrid environment file as acceptance-suite targets: NetworkService + SSHDriver -> --target.

labgrid is optional: it is imported only when an environment is given, and its absence is one
sentence. The environment's top-level `options: {npu_board: PROFILE}` names the board profile,
so `--lg-env lab/labgrid/imx95-verdin.yaml` can stand alone.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from pathlib import Path

from npu_accept.lab.errors import LabError


@dataclass(frozen=True)
class LabTarget:
    role: str
    target: str  # USER@HOST[:PORT] as the suite's --target takes it
    identity: Path | None  # the SSHDriver keyfile, resolved against the env file


@dataclass(frozen=True)
class LabEnvironment:
    path: Path
    targets: tuple[LabTarget, ...]
    board: str | None  # options.npu_board


def _format_target(user: str, address: str, port: int) -> str:
    try:
        is_v6 = ipaddress.ip_address(address).version == 6
    except ValueError:
        is_v6 = False
    host = f"[{address}]" if is_v6 else address
    return f"{user}@{host}:{port}"


def load_environment(path: Path) -> LabEnvironment:
    """Parse the env with labgrid itself and return the SSH target of every labgrid target."""
    try:
        from labgrid import Environment
        from labgrid.driver import SSHDriver
        from labgrid.exceptions import (
            InvalidConfigError,
            NoConfigFoundError,
            NoDriverFoundError,
            NoResourceFoundError,
        )
        from labgrid.resource import NetworkService
    except ImportError:
        raise LabError(
            "--lg-env needs labgrid, which is not installed; pip install labgrid==26.0.1 "
            "(or use --target USER@HOST)."
        ) from None
    if not path.is_file():
        raise LabError(
            f"labgrid environment {path} does not exist; give a file like lab/labgrid/<board>.yaml."
        )
    try:
        env = Environment(config_file=str(path))
        roles = list(env.config.get_targets())
    except (NoConfigFoundError, InvalidConfigError) as exc:
        raise LabError(
            f"labgrid environment {path} is invalid ({exc}); fix it or export the LG_* variables it uses."
        ) from None
    if not roles:
        raise LabError(
            f"labgrid environment {path} defines no targets; add targets: main: with a "
            "NetworkService resource and an SSHDriver."
        )
    targets = []
    for role in roles:
        try:
            target = env.get_target(role)
            service = target.get_resource(NetworkService, wait_avail=False)
        except NoResourceFoundError:
            raise LabError(
                f"labgrid target '{role}' in {path} has no NetworkService resource; add one "
                "with the board's address and user."
            ) from None
        except Exception as exc:  # labgrid raises attrs/validation errors of many kinds here
            raise LabError(
                f"labgrid target '{role}' in {path} cannot be built ({exc}); fix its resources and drivers."
            ) from None
        try:
            driver = target.get_driver(SSHDriver, activate=False)
        except NoDriverFoundError:
            raise LabError(
                f"labgrid target '{role}' in {path} has no SSHDriver; add drivers: SSHDriver: {{keyfile: …}}."
            ) from None
        except Exception as exc:
            raise LabError(
                f"labgrid target '{role}' in {path}: the SSHDriver cannot be built ({exc}); fix its settings."
            ) from None
        keyfile = getattr(driver, "keyfile", "") or ""
        identity = Path(env.config.resolve_path(keyfile)) if keyfile else None
        user = getattr(driver, "username", "") or service.username
        targets.append(LabTarget(role, _format_target(user, service.address, service.port), identity))
    options = env.config.data.get("options") or {}
    board = options.get("npu_board") if isinstance(options, dict) else None
    return LabEnvironment(path=path, targets=tuple(targets), board=str(board) if board else None)

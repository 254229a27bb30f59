# SPDX-License-Identifier: MIT
"""A labgrid environment file as acceptance-suite targets: NetworkService + SSHDriver -> --target.

labgrid is optional: it is imported only when an environment is given, and its absence is one
sentence. The environment's top-level `options: {npu_board: PROFILE}` names the board profile,
so `--lg-env lab/labgrid/imx95-verdin.yaml` can stand alone.

A target may hold a `RemotePlace` instead of its own NetworkService: labgrid then asks the
coordinator (`--lg-coordinator`, else the env's `coordinator_address`, else `LG_COORDINATOR`)
for the resources of that place, which the user must have acquired (or reserved and acquired as
`+`, with `LG_TOKEN`). The suite never acquires, releases or kicks a place: a place it may not use
is one sentence naming the place, its holder and the `labgrid-client` command to run.
"""

from __future__ import annotations

import ipaddress
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from npu_accept.lab.errors import LabError
from npu_accept.transport import visible


@dataclass(frozen=True)
class LabPlace:
    """The labgrid place a target came from (a RemotePlace), as the coordinator names it."""

    name: str
    tags: dict[str, str]
    coordinator: str


@dataclass(frozen=True)
class LabTarget:
    role: str
    target: str  # USER@HOST[:PORT] as the suite's --target takes it
    identity: Path | None  # the SSHDriver keyfile, resolved against the env file
    place: LabPlace | None = None  # set when the target is a RemotePlace


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


def _coordinator_of(env: object, coordinator: str | None) -> str:
    """The address labgrid's RemotePlace dials (resource/remote.py: option, else LG_COORDINATOR)."""
    default = os.environ.get("LG_COORDINATOR", "127.0.0.1:20408")
    return coordinator or env.config.get_option("coordinator_address", default)  # type: ignore[attr-defined]


def _place_session() -> object | None:
    """The coordinator session labgrid's RemotePlace manager opened, if it got that far."""
    from labgrid.resource.remote import RemotePlaceManager

    manager = RemotePlaceManager.get()
    return getattr(manager, "session", None)


def _release_session() -> None:
    """Close the coordinator session: the suite needs the place's address, not a live link."""
    from labgrid.resource.remote import RemotePlaceManager

    manager = RemotePlaceManager.get()
    session = getattr(manager, "session", None)
    if session is None:
        return
    try:
        session.loop.run_until_complete(session.stop())
        session.loop.run_until_complete(session.close())
    except Exception:  # noqa: BLE001 - a session that is already gone is closed enough
        pass
    manager.session = None


def _place_sentence(exc: Exception, name: str, env_path: Path, address: str, session: Any) -> str:
    """One sentence for a RemotePlace the coordinator will not give: who holds it, what to run."""
    text = str(exc).removeprefix("Error: ").strip()
    client = f"labgrid-client -x {address}"
    if session is None or "Could not connect to coordinator" in text:
        return (
            f"The labgrid coordinator {address} (place {name} in {env_path}) cannot be reached; "
            "start labgrid-coordinator there, or give its address with --lg-coordinator HOST:PORT "
            "(or LG_COORDINATOR)."
        )
    me = f"{session.gethostname()}/{session.getuser()}"
    places = dict(getattr(session, "places", {}) or {})
    if name.startswith("+"):
        token = name[1:] or os.environ.get("LG_TOKEN", "")
        held = sorted(p.name for p in places.values() if token and p.reservation == token)
        if not held:
            what = f"token {token}" if token else "place + (LG_TOKEN is not set)"
            return (
                f"The labgrid reservation {what} in {env_path} matches no place on {address}; run "
                f"`{client} reserve --wait TAG=VALUE`, export the LG_TOKEN it prints and run "
                f"`{client} -p + acquire` before the suite."
            )
        name = held[0]
    queue = f"`{client} reserve --wait name={name}`"
    matching = sorted(n for n in places if name in n)
    place = places.get(name) or (places[matching[0]] if len(matching) == 1 else None)
    if place is None and len(matching) > 1:
        return (
            f"labgrid place {name} in {env_path} matches several places on {address} "
            f"({', '.join(matching)}); name one place in the RemotePlace."
        )
    if place is None:
        return (
            f"labgrid place {name} in {env_path} is unknown to the coordinator {address} (its places: "
            f"{', '.join(sorted(places)) or 'none'}); create it with `{client} -p {name} create` and "
            "`add-match`, or fix the RemotePlace name."
        )
    if not place.acquired:
        return (
            f"labgrid place {place.name} on {address} is not acquired; run `{client} -p {place.name} "
            f"acquire` (or queue with {queue}) before the suite, which never acquires a place itself."
        )
    if "orphaned resource" in text:
        return (
            f"labgrid place {place.name} on {address} has lost its resources (their exporter "
            "disconnected); restart labgrid-exporter, then run the suite again."
        )
    if place.acquired != me and me not in place.allowed:
        return (
            f"labgrid place {place.name} on {address} is held by {place.acquired}, not by {me}; wait "
            f"until {place.acquired} runs `{client} -p {place.name} release` (queue with {queue}), or "
            f"ask it to run `{client} -p {place.name} allow {me}`."
        )
    return (
        f"labgrid place {place.name} on {address} cannot be used ({visible(text)}); "
        f"see `{client} -p {place.name} show`."
    )


def load_environment(path: Path, coordinator: str | None = None) -> LabEnvironment:
    """Parse the env with labgrid itself and return the SSH target of every labgrid target.

    `coordinator` (HOST:PORT, the suite's --lg-coordinator) overrides the env's
    `coordinator_address`, as labgrid's own pytest plugin does."""
    try:
        from labgrid import Environment
        from labgrid.exceptions import InvalidConfigError, NoConfigFoundError
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
        if coordinator:
            env.config.set_option("coordinator_address", coordinator)
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
    quiet = _QuietLabgrid()
    logging.getLogger().addFilter(quiet)  # its client logs a refused coordinator on the root logger
    try:
        return _targets(env, path, roles, coordinator)
    finally:
        _release_session()
        logging.getLogger().removeFilter(quiet)


class _QuietLabgrid(logging.Filter):
    """Drop labgrid's own log lines while the places are looked up: the suite's sentence says it."""

    def filter(self, record: logging.LogRecord) -> bool:
        return f"{os.sep}labgrid{os.sep}" not in record.pathname


def _remote_place_names(env: object, role: str) -> list[str]:
    from labgrid.factory import target_factory

    resources, _ = target_factory.normalize_config(env.config.get_targets()[role])  # type: ignore[attr-defined]
    return [str(name) for name in resources.get("RemotePlace", {})]


def _targets(env: object, path: Path, roles: list[str], coordinator: str | None) -> LabEnvironment:
    from labgrid.driver import SSHDriver
    from labgrid.exceptions import NoDriverFoundError, NoResourceFoundError
    from labgrid.remote.client import Error as ClientError
    from labgrid.resource import NetworkService, RemotePlace

    targets = []
    for role in roles:
        place_names = _remote_place_names(env, role)
        try:
            target = env.get_target(role)  # type: ignore[attr-defined]
            service = target.get_resource(NetworkService, wait_avail=False)
        except (ClientError, ConnectionError) as exc:
            name = place_names[0] if place_names else "?"
            raise LabError(
                _place_sentence(exc, name, path, _coordinator_of(env, coordinator), _place_session())
            ) from None
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
        identity = Path(env.config.resolve_path(keyfile)) if keyfile else None  # type: ignore[attr-defined]
        user = getattr(driver, "username", "") or service.username
        place = None
        if isinstance(service.parent, RemotePlace):
            session = _place_session()
            found = session.get_place(service.parent.name) if session is not None else None  # type: ignore[attr-defined]
            name = found.name if found is not None else service.parent.name
            tags = {str(k): str(v) for k, v in (service.parent.tags or {}).items()}
            place = LabPlace(name, tags, _coordinator_of(env, coordinator))
        address = _format_target(user, service.address, service.port)
        targets.append(LabTarget(role, address, identity, place))
    options = env.config.data.get("options") or {}  # type: ignore[attr-defined]
    board = options.get("npu_board") if isinstance(options, dict) else None
    return LabEnvironment(path=path, targets=tuple(targets), board=str(board) if board else None)

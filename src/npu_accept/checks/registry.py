# SPDX-License-Identifier: MIT
"""Which function judges which check for which NPU family.

Every module in the `npu_accept.checks` package may export
`IMPLEMENTS = {(check, family): function}` — family "*" is the fallback for any family — and
`COLLECTORS = {family: function}` for extra facts a family needs from the board (see
`npu_accept.collect`); a module's collectors serve the checks it implements (or those it names in
`SERVES`), so a run of some checks collects only what they need.  The registry is read-only and
built once by scanning the package and every family package's `checks` module
(`npu_accept.families.<family>.checks`, see `npu_accept.families`), so a new family lands as its
own package without editing the existing modules.
"""

from __future__ import annotations

import importlib
import pkgutil
import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from types import MappingProxyType, ModuleType
from typing import Any

from npu_accept.checks.base import CHECK_ORDER, CheckResult, failed, skipped
from npu_accept.facts import BoardFacts
from npu_accept.memo import shared
from npu_accept.profile import Profile

CheckFn = Callable[[BoardFacts, Profile], CheckResult]
CollectorFn = Callable[..., dict[str, Any]]


@dataclass(frozen=True)
class Collector:
    """A family's fact collector and the checks it collects for."""

    function: CollectorFn
    serves: frozenset[str]


class RegistryError(Exception):
    """Two modules claim the same (check, family); the message names both."""


@shared()
def _tables() -> tuple[Mapping[tuple[str, str], CheckFn], Mapping[str, tuple[Collector, ...]]]:
    checks: dict[tuple[str, str], CheckFn] = {}
    owners: dict[tuple[str, str], str] = {}
    collectors: dict[str, list[Collector]] = {}
    for module in _modules():
        for key, function in getattr(module, "IMPLEMENTS", {}).items():
            if key in checks:
                raise RegistryError(
                    f"Check {key[0]} for family {key[1]} is implemented by both "
                    f"{owners[key]} and {module.__name__}; keep one."
                )
            if key[0] not in CHECK_ORDER:
                raise RegistryError(
                    f"{module.__name__} implements unknown check '{key[0]}'; "
                    f"use one of {', '.join(CHECK_ORDER)}."
                )
            checks[key] = function
            owners[key] = module.__name__
        serves = frozenset(getattr(module, "SERVES", ()) or (c for c, _ in getattr(module, "IMPLEMENTS", {})))
        for family, function in getattr(module, "COLLECTORS", {}).items():
            collectors.setdefault(family, []).append(Collector(function, serves))
    frozen = {family: tuple(functions) for family, functions in collectors.items()}
    return MappingProxyType(checks), MappingProxyType(frozen)


def _modules() -> list[ModuleType]:
    """The check modules: `npu_accept.checks.*`, then each family package's `checks` (a module, or
    a package whose modules are each one)."""
    from npu_accept import families

    package = importlib.import_module("npu_accept.checks")
    found = [
        importlib.import_module(f"{package.__name__}.{info.name}")
        for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name)
    ]
    for _, module in families.modules("checks"):
        found.append(module)
        if hasattr(module, "__path__"):  # a family's checks as a package: one module per check
            infos = sorted(pkgutil.iter_modules(module.__path__), key=lambda m: m.name)
            found += [importlib.import_module(f"{module.__name__}.{info.name}") for info in infos]
    return found


def implementation(check: str, family: str) -> CheckFn | None:
    """The function judging `check` for `family`, or the family-independent one, or None."""
    table, _ = _tables()
    return table.get((check, family)) or table.get((check, "*"))


def collectors(family: str, checks: Collection[str] | None = None) -> tuple[Collector, ...]:
    """Extra fact collectors registered for `family` (run after npu-info and the model runs), only
    those serving one of `checks` when given."""
    _, table = _tables()
    chosen = table.get(family, ()) + table.get("*", ())
    return tuple(c for c in chosen if checks is None or c.serves & set(checks))


def run_check(check: str, facts: BoardFacts, profile: Profile) -> CheckResult:
    """Judge one check; a board that could not be examined, or a crashing check, fails with a sentence."""
    if facts.collect_error:
        return failed(check, facts.collect_error, "unreachable")
    function = implementation(check, profile.family)
    if function is None:
        return failed(
            check,
            f"No '{check}' check exists for NPU family {profile.family}; add one to npu_accept.checks.",
            "no-check",
        )
    try:
        return function(facts, profile)
    except Exception as exc:  # noqa: BLE001 - a broken fact must end in a sentence, not a traceback
        return failed(
            check,
            f"The {check} check could not judge board {facts.target} "
            f"({type(exc).__name__}: {exc}); report this with the npu-info output.",
            "check-error",
        )


def run_all(
    facts: BoardFacts, profile: Profile, checks: Collection[str] | None = None
) -> dict[str, CheckResult]:
    """Every check in order, or only `checks` (the others are skipped as not selected)."""
    return judge_all(facts, profile, checks)[0]


def judge_all(
    facts: BoardFacts, profile: Profile, checks: Collection[str] | None = None
) -> tuple[dict[str, CheckResult], dict[str, float]]:
    """`run_all`, and the seconds each selected check took to judge."""
    results: dict[str, CheckResult] = {}
    seconds: dict[str, float] = {}
    for check in CHECK_ORDER:
        if checks is not None and check not in checks:
            results[check] = not_selected(check)
            continue
        started = time.perf_counter()
        results[check] = run_check(check, facts, profile)
        seconds[check] = time.perf_counter() - started
    return results, seconds


def not_selected(check: str) -> CheckResult:
    return skipped(
        check, f"Check {check} was not selected for this run (-k / the tests given).", selected=False
    )

# SPDX-License-Identifier: MIT
"""The probe interface of npu-info.

A family probe is a module `npu_target.probes.<module>` exposing two functions:

    def detect(ctx: ProbeContext) -> bool          # is this family's NPU on this board?
    def probe(ctx: ProbeContext) -> FamilyFacts    # driver/runtime/daemon/delegate/memory/load facts

and two names: `DRIVER`, the driver npu-info names when no NPU is found (the family's name when
absent), and `BACKENDS = {backend: module}`, the npu-run backends of the family (the module is
named under npu_target, e.g. "backends.rknn"; see `npu_target.backends`).  The probe module is
the family's one module on the board: the probes and backends are found through it.

`probe` never raises for a missing fact: it leaves the field None and appends one sentence to
`FamilyFacts.errors`. Probes are looked up by family name, so a module that is not installed
gives one clear sentence instead of an ImportError.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from ..families import FAMILIES
from .common import ProbeContext

# Family -> probe module, in the descriptor's detection order.
FAMILY_MODULES = {family.name: family.probe for family in FAMILIES}


@dataclass
class FamilyFacts:
    """The family-specific sections of the npu-info/1 JSON (see docs/npu-run.md)."""

    driver: dict[str, Any] | None = None
    runtime: dict[str, Any] | None = None
    daemon: dict[str, Any] | None = None
    delegate: dict[str, Any] | None = None
    memory: dict[str, Any] | None = None
    load: str | None = None
    chip_id: str | None = None
    errors: list[str] = field(default_factory=list)


def load_probe(family: str) -> ModuleType | None:
    """The probe module of `family`, or None if it is not installed."""
    module_name = FAMILY_MODULES.get(family)
    if module_name is None:
        return None
    try:
        return importlib.import_module(f"{__name__}.{module_name}")
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.{module_name}":
            raise
        return None


def driver_names() -> list[str]:
    """The drivers of the installed probes, in detection order (each probe's DRIVER)."""
    found = []
    for family in FAMILY_MODULES:
        module = load_probe(family)
        if module is not None:
            found.append(str(getattr(module, "DRIVER", family)))
    return found


def family_backends() -> dict[str, str]:
    """backend -> module under npu_target, of every installed probe's BACKENDS, in detection order."""
    found: dict[str, str] = {}
    for family in FAMILY_MODULES:
        module = load_probe(family)
        for backend, module_name in dict(getattr(module, "BACKENDS", {})).items():
            found.setdefault(str(backend), str(module_name))
    return found


def detect_family(ctx: ProbeContext, errors: list[str]) -> str:
    """The first family whose probe detects its NPU, else "none"."""
    for family, module_name in FAMILY_MODULES.items():
        module = load_probe(family)
        if module is None:
            errors.append(
                f"probe for family '{family}' is not installed "
                f"(npu_target/probes/{module_name}.py missing); its NPU cannot be detected."
            )
            continue
        try:
            found = module.detect(ctx)
        except Exception as exc:  # a broken probe must not hide the other families' facts
            errors.append(
                f"probe for family '{family}' failed while detecting ({_describe(exc)}); "
                "report this with the npu-info output."
            )
            continue
        if found:
            return family
    return "none"


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {str(exc).strip()[:200]}"


def probe_family(ctx: ProbeContext, family: str) -> FamilyFacts:
    module = load_probe(family)
    if module is None:
        return FamilyFacts(errors=[f"no probe is installed for family '{family}'; reinstall npu-tools."])
    try:
        facts = module.probe(ctx)
    except Exception as exc:  # report, never a traceback: npu-info must always print its JSON
        return FamilyFacts(
            errors=[
                f"probe for family '{family}' failed ({_describe(exc)}); "
                "report this with the npu-info output."
            ]
        )
    if not isinstance(facts, FamilyFacts):
        return FamilyFacts(errors=[f"probe for family '{family}' returned no facts; reinstall npu-tools."])
    return facts

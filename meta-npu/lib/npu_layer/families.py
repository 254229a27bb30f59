# SPDX-License-Identifier: MIT
"""The NPU family records as the layer reads them.

The records themselves are the family descriptor of the on-target tools,
recipes-tools/npu-tools/files/npu_target/families.py, which npu-info on the board and the host
suite read too; this module finds it beside itself in the layer (not through BBPATH, where
another layer's file of that name could come first) and loads it on each call, so a BitBake
server that stays up sees an edited descriptor.

npu-base.bbclass reads names() and family() in its event handlers (the NPU_FAMILY check, the
vendor-layer check). The build manifest's recipe roles stay BitBake variables in npu-base.bbclass,
because task signatures follow variables and not what a function reads from a file;
manifest_flags() is what those variables must say, and tests/test_families.py holds them to it.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any

LAYER = Path(__file__).resolve().parents[2]
DESCRIPTOR = LAYER / "recipes-tools" / "npu-tools" / "files" / "npu_target" / "families.py"
ROLES = ("driver", "runtime", "delegate", "daemon")
# What a record's driver_recipe KERNEL stands for in BitBake.
KERNEL_RECIPE = "${PREFERRED_PROVIDER_virtual/kernel}"


class DescriptorError(Exception):
    """The descriptor is missing or cannot be loaded; the message is one sentence with the fix."""


def descriptor() -> ModuleType:
    """The family descriptor module, loaded from the layer's own copy."""
    if not DESCRIPTOR.is_file():
        raise DescriptorError(
            f"meta-npu is incomplete: the family descriptor {DESCRIPTOR} is missing; "
            "check out meta-npu again."
        )
    spec = importlib.util.spec_from_file_location("npu_layer._descriptor", DESCRIPTOR)
    if spec is None or spec.loader is None:
        raise DescriptorError(f"{DESCRIPTOR} is not a Python module; check out meta-npu again.")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def names() -> tuple[str, ...]:
    """Every NPU_FAMILY value, "none" last."""
    return tuple(descriptor().names())


def family(name: str) -> Any:
    """The record of family NAME (a descriptor Family), or None ("none" or an unknown name)."""
    return descriptor().family(name)


def manifest_flags() -> dict[str, dict[str, str]]:
    """What npu-base.bbclass's manifest variables must hold, flag by flag:
    {"NPU_DRIVER_RECIPE": {"neutron": "${PREFERRED_PROVIDER_virtual/kernel}", …}, …,
    "NPU_DRIVER_VERSION": {…}}, one flag per family, "" where the family has no such part."""
    module = descriptor()
    flags: dict[str, dict[str, str]] = {}
    for role in ROLES:
        table = flags.setdefault(f"NPU_{role.upper()}_RECIPE", {})
        for record in module.FAMILIES:
            recipe = getattr(record, f"{role}_recipe")
            table[record.name] = KERNEL_RECIPE if recipe == module.KERNEL else recipe
    flags["NPU_DRIVER_VERSION"] = {r.name: r.driver_version for r in module.FAMILIES}
    return flags

# SPDX-License-Identifier: MIT
"""The NPU families, one package each: what is particular to a family lives in its package.

`npu_accept.families.<family>` holds the family's data and code, each piece optional:

- `__init__.py`: may name the profile sections its boards must state, `PROFILE_SECTIONS =
  {key: why}` (read by `npu_accept.profile`), and the kernel wording of its NPU,
  `KERNEL_SUBJECT` (a regular expression; default: the family's name in any case);
- `signatures.yaml`: its diagnosis signatures (read by `npu_accept.diagnose.catalogue`);
- `versions.yaml`: its version pairings (read by `npu_accept.diagnose.pairings`);
- `checks.py`: its checks and collectors, `IMPLEMENTS`/`COLLECTORS` as in `npu_accept.checks`
  (read by `npu_accept.checks.registry`), e.g. check 10's pairing judge;
- `findings.py`: its npu-diagnose rules, `RULES` (read by `npu_accept.diagnose.findings`);
- `flash.py`: its flashing methods, `METHODS = {name: module}` (read by `npu_accept.flash.methods`).

`any` holds what every family's board can print or use.  The registry iterates the packages that
are there, so a new family is a new package and nothing else here (docs/design.md, "Adding an NPU
family").  The package name is the family's name with "-" written "_" (`cvitek_tpu` is the family
`cvitek-tpu`).
"""

from __future__ import annotations

import importlib
import importlib.util
import re
from importlib import resources
from types import ModuleType


def packages() -> list[str]:
    """The family packages present, sorted (`any` first)."""
    root = resources.files(__name__)
    names = [p.name for p in root.iterdir() if p.is_dir() and (p / "__init__.py").is_file()]
    return sorted(names, key=lambda n: (n != "any", n))


def data_files(name: str) -> list[tuple[str, str]]:
    """(package, text) of every family package's data file NAME, in packages() order."""
    root = resources.files(__name__)
    found = []
    for package in packages():
        path = root / package / name
        if path.is_file():
            found.append((package, path.read_text(encoding="utf-8")))
    return found


def family_name(package: str) -> str:
    """The family a package is for: `cvitek_tpu` -> `cvitek-tpu`, `any` -> `*`."""
    return "*" if package == "any" else package.replace("_", "-")


def modules(name: str) -> list[tuple[str, ModuleType]]:
    """(package, module) of every family package's module NAME (e.g. "checks"), in packages() order.

    A package without the module is left out; an error inside a module that is there is raised."""
    found = []
    for package in packages():
        full = f"{__name__}.{package}.{name}"
        if importlib.util.find_spec(full) is not None:
            found.append((package, importlib.import_module(full)))
    return found


def profile_sections(family: str) -> dict[str, str]:
    """{section: why} a FAMILY's profiles must state (its package's PROFILE_SECTIONS; {} if none)."""
    package = "any" if family == "*" else family.replace("-", "_")
    if package not in packages():
        return {}
    module = importlib.import_module(f"{__name__}.{package}")
    return dict(getattr(module, "PROFILE_SECTIONS", {}))


def kernel_subjects() -> list[str]:
    """Every family package's KERNEL_SUBJECT (its name in any case when it gives none)."""
    found = []
    for package in packages():
        if package == "any":
            continue
        module = importlib.import_module(f"{__name__}.{package}")
        subject = getattr(module, "KERNEL_SUBJECT", None)
        found.append(str(subject) if subject else f"(?i:{re.escape(family_name(package))})")
    return found

# SPDX-License-Identifier: MIT
"""The NPU families, one package each: what is particular to a family lives in its package.

`npu_accept.families.<family>` holds the family's data: today its diagnosis signatures
(`signatures.yaml`, read by `npu_accept.diagnose.catalogue`); `any` holds what every family's
board can print.  The registry iterates the packages that are there, so a new family is a new
package and nothing else here.  The package name is the family's name with "-" written "_"
(`cvitek_tpu` is the family `cvitek-tpu`).
"""

from __future__ import annotations

from importlib import resources


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

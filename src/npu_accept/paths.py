# SPDX-License-Identifier: MIT
"""Where the package's data lives: the one module that knows.

Installed from a wheel, everything is inside the installed packages: profiles, schemas, report
and LAVA templates and the simulated boards' assets under ``npu_accept/``, the suite's test
modules under ``npu_accept/suite/``, the on-target tools' launchers under
``npu_accept/target_tools/`` and their Python package as the top-level ``npu_target``.  Run from
a checkout (with or without ``pip install -e``), the suite and the on-target tools are read where
the repository keeps them (``pytests/`` and the npu-tools recipe's ``files/``), so the image and
the suite upload the same sources.

A user's own board profiles: ``--profiles-dir DIR`` and the environment variable
``NPU_ACCEPT_PROFILES`` (directories separated by ``:``) are searched, in that order, before the
profiles shipped with the package.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

PROFILES_ENV = "NPU_ACCEPT_PROFILES"

_PACKAGE = Path(__file__).resolve().parent
# In a checkout the package is <repo>/src/npu_accept; the repository layout is known from there.
_REPO = _PACKAGE.parent.parent
_RECIPE_FILES = _REPO / "meta-npu" / "recipes-tools" / "npu-tools" / "files"
LAUNCHERS = ("npu-info", "npu-run")


class DataMissing(RuntimeError):
    """A piece of the package's data is not where it should be (a broken install)."""


def package_dir() -> Path:
    """The installed (or checked-out) npu_accept package directory."""
    return _PACKAGE


def packaged_profiles_dir() -> Path:
    """The board profiles shipped with the package."""
    return _PACKAGE / "profiles"


def profile_dirs(extra: Sequence[Path] = ()) -> list[Path]:
    """Directories searched for a profile name: ``extra`` (``--profiles-dir``), then
    ``$NPU_ACCEPT_PROFILES``, then the shipped profiles."""
    from_env = [Path(p) for p in os.environ.get(PROFILES_ENV, "").split(os.pathsep) if p]
    return [*extra, *from_env, packaged_profiles_dir()]


def schemas_dir() -> Path:
    return _PACKAGE / "schemas"


def templates_dir() -> Path:
    """Jinja2 templates of the reports."""
    return _PACKAGE / "templates"


def lava_templates_dir() -> Path:
    """Jinja2 templates of the LAVA job definitions."""
    return _PACKAGE / "templates" / "lava"


def sim_dir() -> Path:
    """The simulated boards (board twins) the demo runs: harness, twin delegate, assets."""
    return _PACKAGE / "sim"


def suite_dir() -> Path:
    """The acceptance suite's test modules and conftest (``pytest <suite_dir> --target …``)."""
    installed = _PACKAGE / "suite"
    if (installed / "conftest.py").is_file():
        return installed
    return _existing(_REPO / "pytests", "the acceptance suite (pytests/)")


@dataclass(frozen=True)
class TargetTools:
    """The on-target tools as the suite uploads them: the launchers and the npu_target package."""

    launchers: dict[str, Path]  # name on the board -> file on the host
    package: Path  # the npu_target package directory

    def files(self) -> dict[str, Path]:
        """Every file to upload, keyed by its path relative to the upload directory."""
        found = {name: path for name, path in self.launchers.items()}
        for path in sorted(self.package.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                found[f"npu_target/{path.relative_to(self.package).as_posix()}"] = path
        return found


def target_tools() -> TargetTools:
    """npu-info, npu-run and npu_target: from the checkout's recipe files/ when run from a
    checkout, else from the installed wheel."""
    if (_RECIPE_FILES / "npu_target").is_dir():
        launcher_dir, package = _RECIPE_FILES, _RECIPE_FILES / "npu_target"
    else:
        launcher_dir = _PACKAGE / "target_tools"
        spec = importlib.util.find_spec("npu_target")
        if spec is None or not spec.submodule_search_locations:
            raise DataMissing(
                "The on-target tools (the npu_target package) are not installed; "
                "reinstall meta-npu-tools (pip install --force-reinstall meta-npu-tools)."
            )
        package = Path(next(iter(spec.submodule_search_locations)))
    launchers = {name: _existing(launcher_dir / name, f"the on-target launcher {name}") for name in LAUNCHERS}
    return TargetTools(launchers, package)


def _existing(path: Path, what: str) -> Path:
    if not path.exists():
        raise DataMissing(
            f"{what} is not at {path}; reinstall meta-npu-tools or run from a complete meta-npu checkout."
        )
    return path

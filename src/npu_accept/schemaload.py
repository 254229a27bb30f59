# SPDX-License-Identifier: MIT
"""The shipped JSON schemas (``schemas/*.schema.json``) as the suite validates with them.

A schema node that lists what a registry holds says so instead of copying the list:
``{"x-npu-registry": "families", "enum": []}`` is filled at load with the NPU families of
``npu_target.families`` (``names()``), ``"backends"`` with npu-run's backends
(``npu_target.backends.BACKEND_MODULES``), ``"flash-methods"`` with npu-flash's methods
(``npu_accept.flash.methods``, each family package's).  The file's own ``enum`` stays empty, so a reader that
skips this loader refuses every value rather than accepting a stale list; a new NPU family edits
no schema (docs/design.md, "Adding an NPU family").
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from npu_accept.memo import shared
from npu_accept.paths import schemas_dir

MARK = "x-npu-registry"


def _families() -> list[str]:
    from npu_target.families import names

    return list(names())


def _backends() -> list[str]:
    from npu_target.backends import BACKEND_MODULES

    return list(BACKEND_MODULES)


def _flash_methods() -> list[str]:
    from npu_accept.flash.spec import method_names

    return list(method_names())


REGISTRIES: dict[str, Callable[[], list[str]]] = {
    "families": _families,
    "backends": _backends,
    "flash-methods": _flash_methods,
}


def fill(node: Any) -> Any:
    """NODE with every registry-marked enum filled in (a new object; NODE is left alone)."""
    if isinstance(node, list):
        return [fill(item) for item in node]
    if not isinstance(node, dict):
        return node
    filled = {key: fill(value) for key, value in node.items()}
    if MARK in filled:
        registry = REGISTRIES.get(str(filled[MARK]))
        if registry is None:
            raise ValueError(
                f"schema registry '{filled[MARK]}' is unknown; use one of {', '.join(REGISTRIES)}"
            )
        filled["enum"] = registry()
    return filled


@shared()
def load(name: str) -> dict[str, Any]:
    """``schemas/<name>.schema.json`` with its registry enums filled in."""
    text = (schemas_dir() / f"{name}.schema.json").read_text(encoding="utf-8")
    loaded: dict[str, Any] = fill(json.loads(text))
    return loaded

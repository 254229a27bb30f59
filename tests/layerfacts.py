# SPDX-License-Identifier: MIT
"""Facts of the meta-npu layer that tests check: layer.conf values and feature-gated bbappends.

Each check returns a list of problems (sentences); an empty list means the layer is right.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from oelint_parser.cls_item import Comment, Include, Item, Variable
from oelint_parser.cls_stash import Stash
from oelint_parser.parser import get_items

COLLECTION = "npu"
COMPAT_SERIES = {"scarthgap", "walnascar", "wrynose", "blacksail"}
# A collection whose appends are those of another one's directory: NXP's meta-imx-ml provides the
# packages of meta-freescale-ml under the same names (packagegroup-imx-ml, STACKS of the issue).
DYNAMIC_ALIASES = {"imx-machine-learning": "meta-freescale-ml"}


@dataclass(frozen=True)
class LayerConf:
    collections: list[str]
    compat: set[str]
    depends: list[str]
    dynamic: list[tuple[str, str]]  # (collection, path pattern)


def read_layer_conf(path: Path) -> LayerConf:
    values: dict[str, list[str]] = {}
    for item in get_items(Stash(quiet=True), str(path)):
        if isinstance(item, Variable):
            words = item.VarValueStripped.replace("\x1b", " ").replace("\\", " ").split()
            # oelint_parser splits LAYERSERIES_COMPAT_npu into name and "sub item" npu.
            name = f"{item.VarName}_{item.SubItem}" if item.SubItem else item.VarName
            if item.VarOp.strip() in ("+=", ".="):
                values.setdefault(name, []).extend(words)
            else:
                values[name] = words
    dynamic = [tuple(entry.split(":", 1)) for entry in values.get("BBFILES_DYNAMIC", [])]
    return LayerConf(
        collections=values.get("BBFILE_COLLECTIONS", []),
        compat=set(values.get(f"LAYERSERIES_COMPAT_{COLLECTION}", [])),
        depends=values.get(f"LAYERDEPENDS_{COLLECTION}", []),
        dynamic=[(c, p) for c, p in dynamic],
    )


def confirmed_collections(path: Path) -> set[str]:
    return set(json.loads(path.read_text())["collections"])


def layer_conf_problems(conf: LayerConf, confirmed: set[str], layer: Path) -> list[str]:
    problems = []
    if COLLECTION not in conf.collections:
        problems.append(f'BBFILE_COLLECTIONS does not add "{COLLECTION}".')
    if conf.compat != COMPAT_SERIES:
        problems.append(
            f"LAYERSERIES_COMPAT_{COLLECTION} is {sorted(conf.compat)}, not {sorted(COMPAT_SERIES)}."
        )
    if conf.depends != ["core"]:
        problems.append(f'LAYERDEPENDS_{COLLECTION} is {conf.depends}, not ["core"].')
    registered = set()
    for collection, pattern in conf.dynamic:
        if collection not in confirmed:
            problems.append(f'BBFILES_DYNAMIC key "{collection}" is not a confirmed vendor collection name.')
        expected = f"${{LAYERDIR}}/dynamic-layers/{DYNAMIC_ALIASES.get(collection, collection)}/"
        if not pattern.startswith(expected):
            problems.append(f'BBFILES_DYNAMIC entry for "{collection}" does not point at {expected}.')
        registered.add(collection)
    for directory in sorted(p.name for p in (layer / "dynamic-layers").iterdir() if p.is_dir()):
        if directory not in registered:
            problems.append(f"dynamic-layers/{directory} is not registered in BBFILES_DYNAMIC.")
    return problems


def _recipe_stem(name: str) -> str:
    return re.split(r"[_.]", name, maxsplit=1)[0]


def own_recipe_names(layer: Path) -> set[str]:
    return {_recipe_stem(p.name) for p in layer.rglob("*.bb")}


def gating_problems(bbappend: Path, own_recipes: set[str]) -> list[str]:
    """A bbappend of another layer's recipe may only act when NPU_ENABLED is "1".

    Allowed statements: include/require (the gated .inc) and assignments whose value tests
    NPU_ENABLED; and the file must test NPU_ENABLED somewhere. Appends to meta-npu's own
    recipes are not gated: those recipes exist only because of this layer.
    """
    if _recipe_stem(bbappend.name).replace("%", "") in own_recipes:
        return []
    problems = []
    tested = False
    for item in get_items(Stash(quiet=True), str(bbappend)):
        if item.Origin != str(bbappend) or isinstance(item, Comment):
            continue
        raw = item.RealRaw.strip()  # RealRaw keeps ${@...} that Raw replaces by a marker
        if not raw:
            continue
        if "NPU_ENABLED" in raw:
            tested = True
        if isinstance(item, Include) or (type(item) is Item and raw.startswith(("require ", "include "))):
            continue
        if isinstance(item, Variable) and "NPU_ENABLED" in raw:
            continue
        first_line = raw.splitlines()[0]
        problems.append(f"{bbappend.name}:{item.InFileLine}: acts without the npu feature: {first_line}")
    if not tested:
        problems.append(f"{bbappend.name}: never tests NPU_ENABLED, so it changes the recipe in every build.")
    return problems

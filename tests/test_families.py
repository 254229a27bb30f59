# SPDX-License-Identifier: MIT
"""The family descriptor (npu_target/families.py) is the one description of an NPU family: the
layer, the profile schema, npu-info's probes and backends, the suite's checks and the recipes'
npu-<family> overrides agree with it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from npu_target import families
from npu_target.backends import BACKEND_MODULES
from npu_target.probes import FAMILY_MODULES

from npu_accept import schemaload
from npu_accept.checks.base import SKIP
from npu_accept.checks.registry import implementation
from npu_accept.paths import schemas_dir

REPO = Path(__file__).resolve().parents[1]
LAYER = REPO / "meta-npu"
PROBES = LAYER / "recipes-tools" / "npu-tools" / "files" / "npu_target" / "probes"
ROLES = ("driver", "runtime", "delegate", "daemon")


def test_the_profile_schema_knows_exactly_the_descriptors_families() -> None:
    schema = schemaload.load("profile")
    assert tuple(schema["properties"]["family"]["enum"]) == families.names()


@pytest.mark.parametrize(
    ("schema", "pointer"),
    [("npu-info", ("properties", "family")), ("image-facts", ("properties", "npu_family"))],
)
def test_every_report_schema_knows_exactly_the_descriptors_families(
    schema: str, pointer: tuple[str, ...]
) -> None:
    """A family missing from npu-info's schema would make its boards "could not be examined"."""
    node = schemaload.load(schema)
    for key in pointer:
        node = node[key]
    assert tuple(node["enum"]) == families.names(), schema


def test_the_backend_enums_are_the_backends_that_exist() -> None:
    for schema, pointer in (
        ("npu-run", ("properties", "backend")),
        ("profile", ("properties", "models", "items", "properties", "backend")),
    ):
        node = schemaload.load(schema)
        for key in pointer:
            node = node[key]
        assert set(node["enum"]) == set(BACKEND_MODULES), schema
    assert {f.backend for f in families.FAMILIES} <= set(BACKEND_MODULES)


def test_no_shipped_schema_copies_a_registry_list() -> None:
    """Every family or backend enum of a shipped schema is filled from the registry at load; the
    file's own list stays empty (a stale copy would refuse a new family's reports)."""
    from npu_accept.flash.spec import method_names

    registered = (set(families.names()) | set(BACKEND_MODULES) | set(method_names())) - {families.NONE}
    marked = 0
    for path in sorted(schemas_dir().glob("*.schema.json")):
        stack = [json.loads(path.read_text())]
        while stack:
            node = stack.pop()
            if isinstance(node, list):
                stack.extend(node)
            elif isinstance(node, dict):
                stack.extend(node.values())
                if schemaload.MARK in node:
                    marked += 1
                    assert node.get("enum") == [], path.name
                else:
                    assert not set(node.get("enum") or []) & registered, (path.name, node)
    assert marked == 6  # family: profile, npu-info, image-facts; backend: profile, npu-run; flash


def test_the_wheel_lists_every_family_package() -> None:
    """pyproject.toml names its packages one by one: a family package (or its checks/ package)
    missing there is missing from the wheel."""
    listed = set(re.findall(r'"(npu_accept\.families[\w.]*)"', (REPO / "pyproject.toml").read_text()))
    root = REPO / "src" / "npu_accept" / "families"
    present = {
        ".".join(("npu_accept", *p.parent.relative_to(root.parent).parts)) for p in root.rglob("__init__.py")
    }
    assert present == listed, present ^ listed


def test_every_family_has_a_signature_catalogue_package() -> None:
    from npu_accept import families as family_packages

    present = {family_packages.family_name(p) for p in family_packages.packages()} - {"*"}
    assert present == set(families.names()) - {"none"}


def test_npu_info_probes_every_family_in_the_descriptors_order() -> None:
    assert list(FAMILY_MODULES) == [f.name for f in families.FAMILIES]
    for family in families.FAMILIES:
        assert (PROBES / f"{family.probe}.py").is_file(), family.name


@pytest.mark.parametrize("family", families.FAMILIES, ids=lambda f: f.name)
def test_every_family_has_a_backend_and_a_memory_check_of_its_kind(family: families.Family) -> None:
    assert family.backend in BACKEND_MODULES
    memory = implementation("memory", family.name)
    assert memory is not None and memory.__module__ != "npu_accept.checks.registry"
    if family.memory == families.NO_MEMORY:  # nothing to judge: the check says so and skips
        assert memory(None, _Named(family.name)).status == SKIP  # type: ignore[arg-type]


class _Named:
    def __init__(self, family: str) -> None:
        self.name = f"{family}-profile"
        self.family = family


def test_recipes_select_only_known_families() -> None:
    used = set()
    for path in LAYER.rglob("*"):
        if path.suffix in (".bb", ".bbappend", ".inc", ".bbclass", ".conf"):
            used |= set(re.findall(r":npu-([a-z][a-z0-9-]*[a-z0-9])\b", path.read_text(errors="replace")))
    assert used and used <= set(families.names()), used - set(families.names())


def test_the_layers_manifest_table_is_the_descriptors() -> None:
    """npu-base.bbclass keeps the manifest roles as BitBake variables (task signatures follow
    them); under real BitBake they must say what the descriptor says, family by family."""
    from bbevents import parsed_classes

    with parsed_classes([LAYER / "classes" / "npu-base.bbclass"], {"LAYERDIR": str(LAYER)}) as bbc:
        for family in families.FAMILIES:
            for role in ROLES:
                flag = bbc.data.getVarFlag(f"NPU_{role.upper()}_RECIPE", family.name, False) or ""
                expected = getattr(family, f"{role}_recipe")
                if expected == families.KERNEL:
                    expected = "${PREFERRED_PROVIDER_virtual/kernel}"
                assert flag == expected, (family.name, role)
            version = bbc.data.getVarFlag("NPU_DRIVER_VERSION", family.name, False) or ""
            assert version == family.driver_version, family.name


def test_bitbake_names_the_descriptors_families_for_an_unknown_one() -> None:
    import bb.event
    from bbevents import parsed_classes

    variables = {"LAYERDIR": str(LAYER), "NPU_FAMILY": "no-such-npu"}
    with parsed_classes([LAYER / "classes" / "npu-base.bbclass"], variables) as bbc:
        message = bbc.fire(bb.event.ConfigParsed())
    assert message is not None and ", ".join(families.names()) in message


def test_the_driver_check_points_at_the_families_kernel_options() -> None:
    from npu_accept.checks import driver

    for family in families.FAMILIES:
        assert driver._kernel_hint(_Named(family.name)) == family.kernel_config  # type: ignore[arg-type]

# SPDX-License-Identifier: MIT
"""The family descriptor (npu_target/families.py) is the one description of an NPU family: the
layer, the profile schema, npu-info's probes and backends, the suite's checks and the recipes'
npu-<family> overrides agree with it."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

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


# oe-core's BB_SIGNATURE_EXCLUDE_FLAGS (meta/conf/bitbake.conf, the same in scarthgap 54355052
# and wrynose ef022bf8): a variable's flags outside this list are in the signature of what uses it.
SIGNATURE_EXCLUDE_FLAGS = (
    "doc deps depends lockfiles vardepsexclude vardeps vardepvalue vardepvalueexclude "
    "file-checksums python task nostamp sstate-lockfile-shared prefuncs postfuncs export_func "
    "deptask rdeptask recrdeptask nodeprrecs stamp-extra-info sstate-outputdirs filename lineno "
    "progress mcdepends number_threads"
)
MANIFEST_CLASSES = [LAYER / "conf" / "layer.conf", LAYER / "classes" / "npu-base.bbclass"]


def _records(bbc: Any) -> dict[str, dict[str, str]]:
    """What the records say the manifest flags are, from npu_layer as layer.conf's addpylib
    line made it importable in the parse of BBC."""
    flags: dict[str, dict[str, str]] = bbc.bb.utils._context["npu_layer"].families.manifest_flags()
    return flags


def _layer_flags(bbc: Any) -> dict[str, dict[str, str]]:
    """What npu-base.bbclass sets, under real BitBake, for every manifest variable and family."""
    return {
        var: {name: bbc.data.getVarFlag(var, name, False) for name in table}
        for var, table in _records(bbc).items()
    }


def test_the_layer_reads_the_records_through_its_python_library() -> None:
    """layer.conf's addpylib line, run by BitBake's parser, makes npu_layer importable, and it
    reads the descriptor the board and the host read (not a copy found through BBPATH)."""
    from bbevents import parsed_classes

    with parsed_classes(MANIFEST_CLASSES, {"LAYERDIR": str(LAYER)}) as bbc:
        library = bbc.bb.utils._context["npu_layer"]
        assert library.families.names() == families.names()
        assert library.families.DESCRIPTOR.samefile(Path(families.__file__))
        assert library.families.family("rknpu") == families.family("rknpu")


def test_the_layers_manifest_table_is_the_descriptors() -> None:
    """npu-base.bbclass keeps the manifest roles as BitBake variables (task signatures follow
    them); under real BitBake they must say what the descriptor says, for every family."""
    from bbevents import parsed_classes

    with parsed_classes(MANIFEST_CLASSES, {"LAYERDIR": str(LAYER)}) as bbc:
        expected = _records(bbc)
        assert set(expected["NPU_DRIVER_RECIPE"]) == {f.name for f in families.FAMILIES}
        flagged = {
            name for name, value in _layer_flags(bbc)["NPU_RUNTIME_RECIPE"].items() if value is not None
        }
        assert flagged >= set(SHIPPED), "a shipped family's roles belong in npu-base.bbclass"
        assert {v: {n: f for n, f in t.items() if n in flagged} for v, t in _layer_flags(bbc).items()} == {
            v: {n: f for n, f in t.items() if n in flagged} for v, t in expected.items()
        }
    # A family the class sets no flags for (one added by its record alone) gets its record's roles
    # when the configuration is parsed with it, as values the signatures follow.
    for name in sorted(set(expected["NPU_DRIVER_RECIPE"]) - flagged):
        import bb.event

        with parsed_classes(MANIFEST_CLASSES, {"LAYERDIR": str(LAYER), "NPU_FAMILY": name}) as bbc:
            bbc.fire(bb.event.ConfigParsed())
            assert {v: {name: t[name]} for v, t in _layer_flags(bbc).items()} == {
                v: {name: t[name]} for v, t in expected.items()
            }


# The families npu-base.bbclass names flag by flag (a family added later may rely on its record).
SHIPPED = ("neutron", "rknpu", "rocket", "cvitek-tpu")


def test_every_family_names_its_manifest_recipes() -> None:
    """No family's manifest is only the kernel: a driver and a runtime recipe each."""
    for family in families.FAMILIES:
        assert family.driver_recipe and family.runtime_recipe, family.name


@pytest.mark.parametrize(
    ("var", "family", "value"),
    [
        ("NPU_RUNTIME_RECIPE", "rknpu", "rknn-toolkit-lite2"),
        ("NPU_DRIVER_RECIPE", "cvitek-tpu", ""),
        ("NPU_DELEGATE_RECIPE", "rocket", "tensorflow-lite"),
        ("NPU_DRIVER_VERSION", "neutron", "2.0"),
    ],
)
def test_a_bbclass_that_differs_from_the_records_is_caught(var: str, family: str, value: str) -> None:
    """The twin: one flag set otherwise in the parsed layer no longer equals the records."""
    from bbevents import parsed_classes

    with parsed_classes(MANIFEST_CLASSES, {"LAYERDIR": str(LAYER)}) as bbc:
        bbc.data.setVarFlag(var, family, value)
        assert _layer_flags(bbc) != _records(bbc)


def _signature_inputs(bbc: Any, key: str) -> dict[str, str]:
    """What BitBake's signature of KEY hashes: every variable, flag and function it depends on
    (bb.data.build_dependencies, followed as bb.data.generate_dependencies follows a task's)."""
    bb = bbc.bb
    data = bbc.data
    data.setVar("BB_SIGNATURE_EXCLUDE_FLAGS", SIGNATURE_EXCLUDE_FLAGS)
    excluded = SIGNATURE_EXCLUDE_FLAGS.split()
    modules = set(bb.codeparser.modulecode_deps)
    keys = {k for k in data if not k.startswith("__")} | modules
    parsing = data.createCopy()
    values: dict[str, str] = {}
    todo = [key]
    while todo:
        name = todo.pop()
        if name in values:
            continue
        deps, values[name] = bb.data.build_dependencies(
            name, keys, modules, set(), excluded, set(), data, parsing
        )
        todo += sorted(deps)
    return values


ROLE_USERS = [
    ("npu_write_manifest", [LAYER / "classes" / "npu-manifest.bbclass"]),
    ("NPU_ROLE_RECIPES", []),
]


@pytest.mark.parametrize(("key", "extra"), ROLE_USERS, ids=[k for k, _ in ROLE_USERS])
@pytest.mark.parametrize("family", families.FAMILIES, ids=lambda f: f.name)
def test_the_signature_follows_every_role(key: str, extra: list[Path], family: families.Family) -> None:
    """Changing any family's recipe of any role (or its driver version) changes what the
    signature of the manifest's writer (do_rootfs runs it) and of NPU_ROLE_RECIPES hashes."""
    import bb.event
    from bbevents import parsed_classes

    variables = {"LAYERDIR": str(LAYER), "NPU_FAMILY": family.name}
    with parsed_classes([*MANIFEST_CLASSES, *extra], variables) as bbc:
        assert bbc.fire(bb.event.ConfigParsed()) is None  # as a build: a family's record may fill its roles
        before = _signature_inputs(bbc, key)
        changed = [f"NPU_{role.upper()}_RECIPE" for role in ROLES]
        if key == "npu_write_manifest":
            changed.append("NPU_DRIVER_VERSION")
        for var in changed:
            old = bbc.data.getVarFlag(var, family.name, False)
            bbc.data.setVarFlag(var, family.name, "changed")
            assert _signature_inputs(bbc, key) != before, (var, family.name)
            bbc.data.setVarFlag(var, family.name, old)
        assert _signature_inputs(bbc, key) == before
        bbc.data.setVar("NPU_UNRELATED", "changed")  # the twin: what it does not use
        assert _signature_inputs(bbc, key) == before


def test_without_the_named_variables_the_signature_would_miss_a_role() -> None:
    """The twin of the vardeps in npu-base.bbclass: the role is read with a computed variable
    name, which BitBake's code parser cannot follow, so without them a role's change is unseen."""
    from bbevents import parsed_classes

    with parsed_classes(MANIFEST_CLASSES, {"LAYERDIR": str(LAYER), "NPU_FAMILY": "rknpu"}) as bbc:
        bbc.data.delVarFlag("npu_role_recipe", "vardeps")
        before = _signature_inputs(bbc, "NPU_ROLE_RECIPES")
        bbc.data.setVarFlag("NPU_RUNTIME_RECIPE", "rknpu", "changed")
        assert _signature_inputs(bbc, "NPU_ROLE_RECIPES") == before


def test_bitbake_names_the_descriptors_families_for_an_unknown_one() -> None:
    import bb.event
    from bbevents import parsed_classes

    variables = {"LAYERDIR": str(LAYER), "NPU_FAMILY": "no-such-npu"}
    with parsed_classes(MANIFEST_CLASSES, variables) as bbc:
        message = bbc.fire(bb.event.ConfigParsed())
    assert message is not None and ", ".join(families.names()) in message


def test_without_the_layers_python_library_bitbake_says_so_in_one_sentence(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """npu-base.bbclass reached through BBPATH alone (layer.conf's addpylib never ran): the
    NPU_FAMILY check stops with the fix instead of an ImportError traceback."""
    import bb.event
    from bbevents import parsed_classes

    library = str(LAYER / "lib")
    monkeypatch.setattr(sys, "path", [p for p in sys.path if Path(p).resolve() != Path(library)])
    for name in [m for m in sys.modules if m == "npu_layer" or m.startswith("npu_layer.")]:
        monkeypatch.delitem(sys.modules, name)
    variables = {"LAYERDIR": str(LAYER), "NPU_FAMILY": "rknpu"}
    with parsed_classes([LAYER / "classes" / "npu-base.bbclass"], variables) as bbc:
        message = bbc.fire(bb.event.ConfigParsed())
    assert message is not None and "addpylib" in message and "BBLAYERS" in message
    assert message.endswith(".") and "\n" not in message and "Traceback" not in message


def test_a_layer_without_the_descriptor_is_one_sentence(tmp_path: Path) -> None:
    """npu_layer finds the descriptor beside itself in the layer; a layer checked out without
    it is refused with the file and the fix. The twin: the real layer loads it."""
    import shutil

    copy = tmp_path / "meta-npu" / "lib" / "npu_layer"
    shutil.copytree(LAYER / "lib" / "npu_layer", copy)
    module = _load(copy / "families.py", "scratch_npu_layer_families")
    with pytest.raises(module.DescriptorError) as refused:
        module.descriptor()
    assert str(refused.value).count(". ") == 0 and "check out meta-npu again" in str(refused.value)
    real = _load(LAYER / "lib" / "npu_layer" / "families.py", "real_npu_layer_families")
    assert real.descriptor().names() == families.names()


def _load(path: Path, name: str) -> Any:
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_driver_check_points_at_the_families_kernel_options() -> None:
    from npu_accept.checks import driver

    for family in families.FAMILIES:
        assert driver._kernel_hint(_Named(family.name)) == family.kernel_config  # type: ignore[arg-type]

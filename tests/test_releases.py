# SPDX-License-Identifier: MIT
"""One branch, every supported release (issue 26, item 7).

- every kas file's core layer (poky or openembedded-core) is pinned at a commit whose release
  (LAYERSERIES_CORENAMES, read upstream: tests/data/core-series.json) meta-npu declares in
  LAYERSERIES_COMPAT_npu;
- what differs between releases is bridged only in meta-npu/releases/ (releases.conf and the
  release-only appends beside it): no other metadata file of the layer uses a construct known to
  differ between releases;
- every kas entry point has its image facts (tests/data/image-facts/<entry>.json);
- releases/releases.conf does, under real BitBake's parser, what it says: the scarthgap shims act
  on scarthgap only, and its UNPACKDIR default is inert where bitbake.conf defines UNPACKDIR.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from bbevents import _bitbake
from layerfacts import read_layer_conf

ROOT = Path(__file__).resolve().parent.parent
LAYER = ROOT / "meta-npu"
SHIMS = LAYER / "releases"
KAS = ROOT / "kas"
FACTS = Path(__file__).resolve().parent / "data" / "image-facts"
CORE_SERIES = json.loads((Path(__file__).resolve().parent / "data" / "core-series.json").read_text())["pins"]
CORE_REPOS = ("poky", "openembedded-core")
ENTRIES = sorted(p for p in KAS.glob("*.yml") if p.name != "base.yml" and not p.name.endswith(".lock.yml"))
RELEASES = (
    "kirkstone",
    "mickledore",
    "nanbield",
    "scarthgap",
    "styhead",
    "walnascar",
    "whinlatter",
    "wrynose",
    "blacksail",
)
METADATA = (".bb", ".bbappend", ".bbclass", ".conf", ".inc")


# ---------------------------------------------------------------- kas files against the layer


def kas_repos(path: Path, seen: set[Path] | None = None) -> dict[str, dict]:
    """The repos of a kas file merged with its includes (later files win, as in kas)."""
    seen = seen or set()
    if path in seen:
        return {}
    seen.add(path)
    data = yaml.safe_load(path.read_text()) or {}
    repos: dict[str, dict] = {}
    for include in (data.get("header") or {}).get("includes") or []:
        name = include if isinstance(include, str) else include.get("file", "")
        for key, value in kas_repos(ROOT / name, seen).items():
            repos.setdefault(key, {}).update(value)
    for key, value in (data.get("repos") or {}).items():
        repos.setdefault(key, {}).update(value or {})
    return repos


def release_problems(path: Path, compat: set[str], series: dict[str, dict]) -> list[str]:
    repos = kas_repos(path)
    cores = [
        k
        for k in CORE_REPOS
        if k in repos and (repos[k] or {}).get("layers", {}).get("meta", "") != "disabled"
    ]
    if not cores:
        return []  # a fragment (kas/opt/, kas/include/ without a core): its entry is checked
    name = path.relative_to(
        path.parents[1] if path.parent.name in ("opt", "include", "check") else path.parent
    )
    commit = str(repos[cores[0]].get("commit", ""))
    known = series.get(commit)
    if known is None:
        return [
            f"{name}: the core layer {cores[0]} is pinned at {commit or 'no commit'}, whose release is not "
            "recorded: read LAYERSERIES_CORENAMES of meta/conf/layer.conf there and add it to "
            "tests/data/core-series.json."
        ]
    if not set(known["corenames"]) & compat:
        return [
            f"{name}: its core layer is {'/'.join(known['corenames'])}, which LAYERSERIES_COMPAT_npu "
            f"({' '.join(sorted(compat))}) does not list: add the release and its shims, or move the entry."
        ]
    return []


COMPAT = read_layer_conf(LAYER / "conf" / "layer.conf").compat


@pytest.mark.parametrize("path", sorted(KAS.rglob("*.yml")), ids=lambda p: p.relative_to(KAS).as_posix())
def test_every_kas_file_is_on_a_release_the_layer_declares(path: Path) -> None:
    assert release_problems(path, COMPAT, CORE_SERIES) == []


def test_every_entry_point_has_a_core_layer() -> None:
    assert all(any(k in kas_repos(p) for k in CORE_REPOS) for p in ENTRIES)


def test_an_entry_on_an_undeclared_release_is_reported(tmp_path: Path) -> None:
    entry = tmp_path / "kas" / "board.yml"
    entry.parent.mkdir()
    entry.write_text(
        "header:\n  version: 23\nrepos:\n  openembedded-core:\n    branch: kirkstone\n"
        "    commit: 1111111111111111111111111111111111111111\n    layers:\n      meta:\n"
    )
    series = {"1111111111111111111111111111111111111111": {"corenames": ["kirkstone"]}}
    assert release_problems(entry, COMPAT, series) == [
        "board.yml: its core layer is kirkstone, which LAYERSERIES_COMPAT_npu "
        f"({' '.join(sorted(COMPAT))}) does not list: add the release and its shims, or move the entry."
    ]
    unknown = release_problems(entry, COMPAT, {})
    assert len(unknown) == 1 and "whose release is not recorded" in unknown[0]


def test_the_declared_releases_are_the_supported_ones() -> None:
    # Yocto Project's releases page and oe-core's branches: scarthgap 5.0 LTS, wrynose 6.0 LTS,
    # blacksail 6.1 (oe-core master, LAYERSERIES_CORENAMES "wrynose blacksail" at 35a2c6ed);
    # walnascar (end of life) for NXP's BSP rel_imx_6.12.49_2.2.0 (kas/imx95-verdin.yml).
    assert COMPAT == {"scarthgap", "walnascar", "wrynose", "blacksail"}


# ---------------------------------------------------------------- release-specific constructs

# (pattern, why it differs between releases). Matched on lines that are not comments.
CONSTRUCTS = (
    (re.compile(r"\bLAYERSERIES_CORENAMES\b"), "tests the Yocto release"),
    (re.compile(r"^\s*UNPACKDIR\s*(\?\?=|\?=|:?=|=)"), "sets UNPACKDIR (styhead and later define it)"),
    (re.compile(r"\bBB_GIT_DEFAULT_DESTSUFFIX\b"), "git's default destsuffix differs (whinlatter: ${BP})"),
    (re.compile(r"\bBB_DANGLINGAPPENDS_WARNONLY\b"), "hides appends a release's recipe does not match"),
    (re.compile(r'^\s*S\s*=\s*"\$\{WORKDIR\}'), "the scarthgap layout of S (styhead and later: UNPACKDIR)"),
    (re.compile(r"\$\{WORKDIR\}/git\b"), "the unpack directory of git sources differs between releases"),
    (
        re.compile(r"^\s*DELTA_KERNEL_DEFCONFIG\S*\s*(\?\?=|\?=|\+=|=\+|\.=|=\.|:?=|=)"),
        "linux-imx 6.18 refuses DELTA_KERNEL_DEFCONFIG as soon as it exists",
    ),
    (re.compile(r"[:_](" + "|".join(RELEASES) + r")\b"), "an override or name keyed on a release"),
)
GIT_URI = re.compile(r"git://[^\s\"']+")


def construct_problems(path: Path, text: str) -> list[str]:
    problems = []
    lines = text.replace("\\\n", " ").splitlines()
    for number, line in enumerate(lines, 1):
        if line.lstrip().startswith("#"):
            continue
        if path.name == "layer.conf" and line.lstrip().startswith("LAYERSERIES_COMPAT_"):
            continue
        for pattern, why in CONSTRUCTS:
            if pattern.search(line):
                problems.append(f"{path.name}:{number}: {why}; bridge it in meta-npu/releases/releases.conf.")
        for uri in GIT_URI.findall(line):
            if "destsuffix=" not in uri and not line.lstrip().startswith("NPU_CVI_SDK_URI"):
                problems.append(
                    f"{path.name}:{number}: git source without destsuffix (bitbake 2.12 unpacks into git/, "
                    "whinlatter into ${BP}); name destsuffix."
                )
    return problems


def layer_metadata() -> list[Path]:
    return sorted(
        p
        for p in LAYER.rglob("*")
        if p.suffix in METADATA and SHIMS not in p.parents and "files" not in p.relative_to(LAYER).parts
    )


@pytest.mark.parametrize("path", layer_metadata(), ids=lambda p: p.relative_to(LAYER).as_posix())
def test_no_release_specific_construct_outside_the_shim_place(path: Path) -> None:
    assert construct_problems(path, path.read_text()) == []


@pytest.mark.parametrize(
    "line",
    [
        'UNPACKDIR ??= "${WORKDIR}"',
        'S = "${WORKDIR}/git"',
        'SRC_URI = "git://github.com/sophgo/cvimath.git;protocol=https;branch=sg200x-dev"',
        'DELTA_KERNEL_DEFCONFIG:append = " npu-neutron.cfg"',
        "FOO = \"${@'a' if 'scarthgap' in d.getVar('LAYERSERIES_CORENAMES') else ''}\"",
        'RDEPENDS:${PN}:scarthgap = "foo"',
        'BB_GIT_DEFAULT_DESTSUFFIX = "git"',
    ],
)
def test_a_release_specific_construct_is_reported(line: str, tmp_path: Path) -> None:
    path = tmp_path / "foo_1.0.bb"
    assert construct_problems(path, f"# SPDX-License-Identifier: MIT\n{line}\n") != []


def test_a_release_free_recipe_passes(tmp_path: Path) -> None:
    text = (
        'SRC_URI = "git://github.com/sophgo/cvimath.git;protocol=https;branch=sg200x-dev;destsuffix=${BP}"\n'
        'S = "${UNPACKDIR}/${BP}"\n# scarthgap is named in a comment only\n'
    )
    assert construct_problems(tmp_path / "foo_1.0.bb", text) == []


# ---------------------------------------------------------------- facts per entry


def facts_problems(entries: list[Path], facts: Path) -> list[str]:
    return [
        f"kas/{e.name} has no image facts: make tests/data/image-facts/{e.stem}.json"
        " as docs/image-facts.md says."
        for e in entries
        if not (facts / f"{e.stem}.json").is_file()
    ]


def test_every_entry_has_its_facts() -> None:
    assert facts_problems(ENTRIES, FACTS) == []


def test_an_entry_without_facts_is_reported(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text("{}")
    assert facts_problems([Path("kas/a.yml"), Path("kas/b.yml")], tmp_path) == [
        "kas/b.yml has no image facts: make tests/data/image-facts/b.json as docs/image-facts.md says."
    ]


# ---------------------------------------------------------------- releases.conf under real BitBake

# oe-core wrynose (ef022bf8) meta/conf/bitbake.conf line 417, parsed after every layer.conf.
WRYNOSE_BITBAKE_CONF = 'UNPACKDIR ??= "${WORKDIR}/sources"\n'


def parse_layer(corenames: str, later: str, tmp_path: Path):
    bb = _bitbake()
    d = bb.data_smart.DataSmart()
    d.setVar("LAYERDIR", str(LAYER))
    d.setVar("LAYERDIR_RE", re.escape(str(LAYER)))
    d.setVar("WORKDIR", "/build/w")
    # As the cooker parses layer.conf (bb.cookerdata.parse_config_file), so addpylib is honoured.
    bb.parse.handle(str(LAYER / "conf" / "layer.conf"), d, True, baseconfig=True)
    d.expandVarref("LAYERDIR")
    d.expandVarref("LAYERDIR_RE")
    if later:
        conf = tmp_path / "bitbake.conf"
        conf.write_text(later)
        bb.parse.handle(str(conf), d, True)
    d.setVar("LAYERSERIES_CORENAMES", corenames)  # what bitbake's cookerdata sets after the layers
    return d


def test_scarthgap_gets_unpackdir_the_mesa_mask_and_its_appends(tmp_path: Path) -> None:
    d = parse_layer("scarthgap", "", tmp_path)
    assert d.getVar("UNPACKDIR") == "/build/w"
    mask = d.getVar("BBMASK").split()
    assert re.search(mask[-1], str(LAYER / "recipes-runtime/mesa/mesa.bbappend"))
    assert not re.search(mask[-1], str(SHIMS / "scarthgap/recipes-graphics/mesa/mesa_%.bbappend"))
    assert f"{SHIMS}/scarthgap/recipes-*/*/*.bbappend" in d.getVar("BBFILES").split()


def test_on_wrynose_the_shims_are_inert(tmp_path: Path) -> None:
    d = parse_layer("wrynose", WRYNOSE_BITBAKE_CONF, tmp_path)
    assert d.getVar("UNPACKDIR") == "/build/w/sources"
    assert (d.getVar("BBMASK") or "").split() == []
    assert not any(f.startswith(f"{SHIMS}/") for f in d.getVar("BBFILES").split())
    master = parse_layer("wrynose blacksail", WRYNOSE_BITBAKE_CONF, tmp_path)
    assert (master.getVar("BBMASK") or "").split() == []


def test_every_release_only_append_has_a_common_counterpart_or_reason() -> None:
    for append in SHIMS.rglob("*.bbappend"):
        release = append.relative_to(SHIMS).parts[0]
        assert release in RELEASES, append
        assert "NPU_ENABLED" in append.read_text(), f"{append.name} must act only with the npu feature"

# SPDX-License-Identifier: MIT
"""Adding an NPU family (docs/design.md, "Adding an NPU family"), done by the test itself.

The host package, the on-target package, the layer's conf/ and classes/, pyproject.toml and the
tests are copied into a scratch tree; a scratch family "hailo" is added there as a contributor
would add one: its own host package (`src/npu_accept/families/hailo/`), its target module
(`npu_target/probes/hailo.py`), its dynamic layer (`meta-npu/dynamic-layers/hailo/`) and an edit
of at most three shared files, the ones SHARED names (its record, its vendor collection's line,
its package's line in the wheel).  Every file the addition touched is then compared with that
list, and in the scratch tree the family works: the registries list it, npu-info's schema
accepts its report, its pairing check judges (no silent skip), the catalogue loads its
signatures, npu-diagnose runs its rule and reads its kernel lines, npu-flash knows its method,
and tests/test_families.py passes there.  The twins are the same family without a piece: one
sentence names the missing file.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
TARGET_FILES = "meta-npu/recipes-tools/npu-tools/files"
COPIED = (
    "src/npu_accept",
    TARGET_FILES,
    "meta-npu/conf",
    "meta-npu/classes",
    "meta-npu/lib",
    "meta-npu/releases",
    "pyproject.toml",
    "tests",
)

# What a family owns: nothing else in the tree is edited but SHARED.
OWN = (
    "src/npu_accept/families/hailo/",
    f"{TARGET_FILES}/npu_target/probes/hailo.py",
    "meta-npu/dynamic-layers/hailo/",
)
# The shared files a family edits: its record, its vendor layer's collection, its package in the wheel.
SHARED = (
    f"{TARGET_FILES}/npu_target/families.py",
    "meta-npu/conf/layer.conf",
    "pyproject.toml",
)
MAX_SHARED = 3

PACKAGE = "src/npu_accept/families/hailo"
FILES = {
    f"{PACKAGE}/__init__.py": '''\
        # SPDX-License-Identifier: MIT
        """The hailo family (a scratch family of tests/test_adding_a_family.py)."""
        ''',
    f"{PACKAGE}/signatures.yaml": """\
        # SPDX-License-Identifier: MIT
        family: hailo
        signatures:
          - id: hailo-firmware-missing
            rank: 12
            match: ['HAILO_FW_NOT_FOUND']
            sentence: "The Hailo firmware is missing ({line})."
            action: Install the firmware of the driver's release.
            learnt_from: [https://example.invalid/scratch]
        """,
    f"{PACKAGE}/checks.py": '''\
        # SPDX-License-Identifier: MIT
        """Check 10 for hailo: each model is a .hef."""

        from __future__ import annotations

        from npu_accept.checks.base import CheckResult, failed, passed, skipped
        from npu_accept.facts import BoardFacts
        from npu_accept.profile import Profile


        def check_hef_pairing(facts: BoardFacts, profile: Profile) -> CheckResult:
            odd = [m.name for m in profile.models if not m.path.endswith(".hef")]
            if odd:
                return failed("pairing", f"Models {', '.join(odd)} are no .hef files.", "not-hef")
            return passed("pairing", "Every model is a .hef of the Dataflow Compiler.")


        def check_no_memory(facts: BoardFacts, profile: Profile) -> CheckResult:
            return skipped("memory", f"Profile {profile.name}: the Hailo-8 has its own memory.")


        IMPLEMENTS = {("pairing", "hailo"): check_hef_pairing, ("memory", "hailo"): check_no_memory}
        ''',
    f"{PACKAGE}/findings.py": '''\
        # SPDX-License-Identifier: MIT
        """npu-diagnose rules of hailo."""

        from __future__ import annotations

        from npu_accept.diagnose.findings import Context, Finding, Rule


        def hailo_reset(ctx: Context) -> list[Finding]:
            if not any("HAILO_RESET" in d.text for d in ctx.text_docs()):
                return []
            return [Finding(14, "hailo-reset", "The Hailo device was reset.", "Power-cycle the board.")]


        RULES: tuple[Rule, ...] = (hailo_reset,)
        ''',
    f"{PACKAGE}/flash.py": '''\
        # SPDX-License-Identifier: MIT
        """hailo's flashing method: a plan that only prints."""

        from __future__ import annotations

        import sys

        from npu_accept.flash.plan import Plan


        def build_plan(spec, info, request) -> Plan:
            plan = Plan(method="hailofw")
            plan.add("nothing is written on a scratch board", "true", str(request.image))
            return plan


        def preflight() -> None:
            pass


        METHODS = {"hailofw": sys.modules[__name__]}
        ''',
    f"{TARGET_FILES}/npu_target/probes/hailo.py": '''\
        # SPDX-License-Identifier: MIT
        """hailo on the board: the probe and the backend (a scratch family)."""

        from __future__ import annotations

        from . import FamilyFacts
        from .common import ProbeContext

        DRIVER = "hailo_pci"
        BACKENDS = {"hailort": "probes.hailo"}


        def detect(ctx: ProbeContext) -> bool:
            return ctx.exists("/dev/hailo0")


        def probe(ctx: ProbeContext) -> FamilyFacts:
            driver = {"name": "hailo_pci", "version": None, "version_source": None}
            return FamilyFacts(driver={**driver, "module_loaded": None, "devices": ["/dev/hailo0"]})


        def run(request):
            from ..errors import RunFailure

            raise RunFailure("hailort is not installed on this scratch board.")
        ''',
    "meta-npu/dynamic-layers/hailo/recipes-tools/npu-tools/npu-tools_%.bbappend": """\
        # SPDX-License-Identifier: MIT
        # The Python binding of the scratch family's backend (a name made up for the test).
        NPU_TOOLS_BINDINGS:npu-hailo = "python3-hailort"
        """,
}
# The shared edits, each appended to its file.
EDITS = {
    f"{TARGET_FILES}/npu_target/families.py": """

        FAMILIES = (
            *FAMILIES,
            family("rocket")._replace(  # type: ignore[union-attr]
                name="hailo",
                stack="Hailo-8 on PCIe with HailoRT",
                probe="hailo",
                backend="hailort",
                kernel_config="the hailo_pci kernel module",
                memory=NO_MEMORY,
            ),
        )
        """,
    "meta-npu/conf/layer.conf": """
        BBFILES_DYNAMIC += "hailo:${LAYERDIR}/dynamic-layers/hailo/*/*/*.bbappend"
        """,
}
PROFILE = """\
    schema: npu-profile/1
    name: hailo-board
    description: a scratch board of the hailo family
    family: hailo
    soc:
      compatible: ["scratch,board"]
    driver:
      name: hailo_pci
      devices: [/dev/hailo0]
    delegate: null
    runtime: null
    daemon: null
    memory: null
    models:
      - name: resnet
        path: /usr/share/npu-models/resnet.hef
        backend: hailort
        reference: /usr/share/npu-models/resnet.tflite
        inputs:
          - random: {shape: [1, 224, 224, 3], dtype: uint8, low: 0, high: 255, seed: 0}
        thresholds: {cosine: 0.99, euclid: 0.90, sqnr_db: 20, top_k: 5, top_k_agree: 0.8}
    performance: {runs: 5, warmup: 1, min_speedup: 1.0, regression_tolerance: 0.2}
    flash:
      method: hailofw
    """
# Run in the scratch tree: each line printed is one fact the test asserts on.
PROBE = """\
    import json, sys
    from pathlib import Path
    import npu_accept, npu_target
    assert npu_accept.__file__.startswith(sys.argv[1]) and npu_target.__file__.startswith(sys.argv[1])
    from npu_accept import families, untrusted
    from npu_accept.checks.registry import run_check
    from npu_accept.diagnose import catalogue, findings
    from npu_accept.diagnose.sources import Document
    from npu_accept.facts import BoardFacts
    from npu_accept.flash.spec import load_flash_spec
    from npu_accept.profile import load_profile
    from npu_target import families as records
    from npu_target.backends import BACKEND_MODULES, load_backend
    from npu_target.info import collect
    from npu_target.probes.common import ProbeContext

    root = Path(sys.argv[2])
    out = {}
    out["names"] = list(records.names())
    out["packages"] = families.packages()
    out["backends"] = sorted(BACKEND_MODULES)
    load_backend("hailort")
    (root / "board" / "dev").mkdir(parents=True)
    (root / "board" / "dev" / "hailo0").touch()
    report = collect(ProbeContext(root=root / "board"))
    out["detected"] = report["family"]
    untrusted.validated(json.dumps(report).encode(), "npu-info", "npu-info")
    out["no_npu"] = [e for e in collect(ProbeContext(root=root / "empty")).get("errors") if "no NPU" in e]
    profile = load_profile(str(root / "hailo-board.yaml"))
    result = run_check("pairing", BoardFacts(target="root@board", info=report), profile)
    out["pairing"] = [result.status, result.message]
    out["memory"] = run_check("memory", BoardFacts(target="root@board", info=report), profile).status
    out["signatures"] = [s.id for s in catalogue.load().for_family("hailo").signatures]
    doc = Document("dmesg.txt", text="hailo: HAILO_RESET HAILO_FW_NOT_FOUND\\n")
    out["findings"] = [f.code for f in findings.diagnose(findings.Context(docs=[doc], family_hint="hailo"))]
    out["flash"] = load_flash_spec(str(root / "hailo-board.yaml")).method
    out["kernel_subject"] = bool(findings.NPU_SUBJECT.search("HAILO: request timed out"))
    print(json.dumps(out))
    """


def _digests(tree: Path) -> dict[str, str]:
    return {
        str(p.relative_to(tree)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in tree.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }


def _scratch_tree(tmp: Path, leave_out: tuple[str, ...] = ()) -> tuple[Path, set[str]]:
    """The copied tree with the family added (but LEAVE_OUT), and the files the addition touched."""
    tree = tmp / "tree"
    for part in COPIED:
        if (REPO / part).is_file():
            shutil.copy2(REPO / part, tree / part)
        else:
            shutil.copytree(REPO / part, tree / part, ignore=shutil.ignore_patterns("__pycache__"))
    before = _digests(tree)
    for name, text in FILES.items():
        if name not in leave_out:
            (tree / name).parent.mkdir(parents=True, exist_ok=True)
            (tree / name).write_text(textwrap.dedent(text))
    for name, text in EDITS.items():
        with (tree / name).open("a") as stream:
            stream.write(textwrap.dedent(text))
    listed = (tree / "pyproject.toml").read_text()
    line = '    "npu_accept.families",\n'
    assert line in listed, "pyproject.toml lists its packages otherwise; update the test"
    (tree / "pyproject.toml").write_text(listed.replace(line, line + '    "npu_accept.families.hailo",\n'))
    after = _digests(tree)
    touched = {name for name in after if before.get(name) != after[name]}
    (tmp / "hailo-board.yaml").write_text(textwrap.dedent(PROFILE))
    return tree, touched


def _env(tree: Path) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join((str(tree / "src"), str(tree / TARGET_FILES))))
    env.pop("NPU_ACCEPT_PROFILES", None)
    return env


def _probe(tmp: Path, tree: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(PROBE), str(tree), str(tmp)],
        capture_output=True,
        text=True,
        env=_env(tree),
        cwd=tmp,
        timeout=120,
    )


def test_a_new_family_is_its_own_package_its_layer_and_the_shared_files(tmp_path: Path) -> None:
    tree, touched = _scratch_tree(tmp_path)
    outside = sorted(t for t in touched if not t.startswith(OWN) and t not in SHARED)
    assert not outside, f"adding a family edited {outside}, outside its own files and SHARED"
    shared = {t for t in touched if t in SHARED}
    assert shared == set(SHARED) and len(shared) <= MAX_SHARED
    assert '"npu_accept.families.hailo"' in (tree / "pyproject.toml").read_text()  # the wheel carries it

    run = _probe(tmp_path, tree)
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    assert "hailo" in out["names"] and "hailo" in out["packages"] and "hailort" in out["backends"]
    assert out["detected"] == "hailo"  # and npu-info's schema accepted the report
    assert out["no_npu"] and "hailo_pci" in out["no_npu"][0]
    assert out["pairing"] == ["pass", "Every model is a .hef of the Dataflow Compiler."]
    assert out["memory"] == "skip"  # check 6 of its kind (NO_MEMORY), from its own checks.py
    assert out["signatures"] and "hailo-firmware-missing" in out["signatures"]
    assert "hailo-reset" in out["findings"]
    assert out["flash"] == "hailofw"
    assert out["kernel_subject"]  # its kernel lines count as the NPU stack's in npu-diagnose

    # The descriptor's own tests hold in the scratch tree too, for every family, hailo included.
    held = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_families.py"],
        capture_output=True,
        text=True,
        env=_env(tree),
        cwd=tree,
        timeout=300,
    )
    assert held.returncode == 0, held.stdout[-3000:] + held.stderr[-2000:]


def test_a_family_without_a_pairing_check_gets_a_sentence_naming_the_file(tmp_path: Path) -> None:
    tree, _ = _scratch_tree(tmp_path, leave_out=(f"{PACKAGE}/checks.py",))
    run = _probe(tmp_path, tree)
    assert run.returncode == 0, run.stderr
    status, message = json.loads(run.stdout)["pairing"]
    assert status == "fail"
    assert "has no pairing check" in message and "npu_accept/families/hailo/checks.py" in message
    assert message.count(". ") == 0 and message.endswith(".")


def test_a_family_without_its_target_module_is_named_by_npu_info(tmp_path: Path) -> None:
    tree, _ = _scratch_tree(tmp_path, leave_out=(f"{TARGET_FILES}/npu_target/probes/hailo.py",))
    run = _probe(tmp_path, tree)
    assert run.returncode != 0
    # npu-run: the backend came from the module, so it is unknown (one sentence, exit 2 in npu-run)
    assert "unknown backend 'hailort'; choose one of: " in run.stderr
    env = dict(os.environ, PYTHONPATH=str(tree / TARGET_FILES))
    board = tmp_path / "board" / "dev"
    board.mkdir(parents=True)
    info = subprocess.run(
        [sys.executable, "-c", INFO, str(tmp_path / "board")], capture_output=True, text=True, env=env
    )
    assert info.returncode == 0, info.stderr
    errors = json.loads(info.stdout)["errors"]
    assert any(
        "probe for family 'hailo' is not installed (npu_target/probes/hailo.py missing)" in e for e in errors
    )


def test_a_family_without_its_flash_method_is_refused_at_profile_load(tmp_path: Path) -> None:
    tree, _ = _scratch_tree(tmp_path, leave_out=(f"{PACKAGE}/flash.py",))
    env = _env(tree)
    code = "import sys; from npu_accept.flash.cli import run; sys.exit(run(sys.argv[1:]))"
    argv = ["--board", str(tmp_path / "hailo-board.yaml"), "--image", str(tmp_path / "x.wic"), "--dry-run"]
    flash = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, env=env)
    assert flash.returncode == 1 and "Traceback" not in flash.stderr, flash.stderr
    assert "key 'flash.method' is invalid ('hailofw' is not one of" in flash.stderr
    assert flash.stderr.count("\n") == 1


INFO = """\
import json, sys
from pathlib import Path
from npu_target.info import collect
from npu_target.probes.common import ProbeContext
print(json.dumps(collect(ProbeContext(root=Path(sys.argv[1])))))
"""


def test_the_design_doc_lists_the_files_a_family_owns_and_edits() -> None:
    text = (REPO / "docs" / "design.md").read_text()
    match = re.search(r"^## Adding an NPU family\n(?P<body>.*?)(?=^## )", text, re.M | re.S)
    assert match, "docs/design.md has no section 'Adding an NPU family'"
    named = set(re.findall(r"`([^`\s]+)`", match.group("body")))
    own = {f.replace("hailo", "<family>") for f in OWN}
    assert own <= named, own - named
    assert set(SHARED) <= named, set(SHARED) - named
    said = re.search(r"at most (?P<n>\w+) shared files", match.group("body"))
    assert said and said.group("n") in (str(MAX_SHARED), "three")


@pytest.mark.parametrize("name", sorted(FILES))
def test_each_piece_a_family_adds_is_named_in_the_design_doc(name: str) -> None:
    text = (REPO / "docs" / "design.md").read_text()
    body = text.split("## Adding an NPU family", 1)[-1].split("\n## ", 1)[0]
    leaf = name.rsplit("/", 1)[-1].replace("hailo", "<family>")
    assert re.search(rf"`(?:[^`\s]*/)?{re.escape(leaf)}`", body), name

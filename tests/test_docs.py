# SPDX-License-Identifier: MIT
"""The repository stands alone: its documents link to files that exist, and nothing in it points
at a development machine's paths or at documents its users do not have."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
MACHINE_PATH = re.compile(r"/work/|\.\./shared")
PRIVATE_DOCUMENT = re.compile(r"seed[ _-]?0\d\d", re.IGNORECASE)
# Files that still cite the project's private "seed" documents by number; each should name the
# document instead (e.g. "the i.MX95 A0 field report", "Rockchip's RKNN SDK v2.3.2 user guide").
# This list may only shrink: a file not in it that cites one fails the test.
KNOWN_PRIVATE_DOCUMENT_CITATIONS = frozenset(
    {
        "meta-npu/dynamic-layers/rockchip/recipes-kernel/linux/files/rknpu.cfg",
        "meta-npu/dynamic-layers/rockchip/recipes-kernel/linux/linux-rockchip-rknpu.inc",
        "meta-npu/recipes-models/npu-model-neutron/npu-model-neutron_1.0.bb",
        "meta-npu/recipes-tools/npu-tools/files/npu_target/backends/rknn.py",
        "meta-npu/recipes-tools/npu-tools/files/npu_target/probes/rknpu.py",
        "src/npu_accept/checks/rknpu.py",
        "src/npu_accept/checks/summary.py",
        "src/npu_accept/logparse.py",
        "tests/test_checks.py",
        "tests/test_compare.py",
        "tests/test_logparse.py",
        "tests/test_rockchip.py",
        "tests/twins/boards_rockchip.py",
    }
)
SELF = "tests/test_docs.py"


def _text_files() -> dict[str, str]:
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    texts = {}
    for name in filter(None, (n.decode() for n in listed)):
        path = REPO / name
        if not path.is_file():
            continue
        data = path.read_bytes()
        if b"\0" not in data[:8192]:
            texts[name] = data.decode("utf-8", errors="replace")
    return texts


@pytest.fixture(scope="module")
def texts() -> dict[str, str]:
    return _text_files()


def test_nothing_mentions_a_development_machine_path(texts: dict[str, str]) -> None:
    found = [
        f"{name}:{text.count(chr(10), 0, match.start()) + 1}"
        for name, text in texts.items()
        if name != SELF
        for match in MACHINE_PATH.finditer(text)
    ]
    assert not found, f"paths of a development machine (cite the upstream source instead): {found}"


def test_no_new_citation_of_a_private_document(texts: dict[str, str]) -> None:
    citing = {name for name, text in texts.items() if name != SELF and PRIVATE_DOCUMENT.search(text)}
    new = sorted(citing - KNOWN_PRIVATE_DOCUMENT_CITATIONS)
    assert not new, (
        f"{new} cite a 'seed' document users do not have; say what it is (e.g. the i.MX95 A0 "
        "field report) and put the upstream source in docs/PROVENANCE.md"
    )


def test_every_relative_link_in_the_documents_resolves(texts: dict[str, str]) -> None:
    broken = []
    for name, text in texts.items():
        if not name.endswith(".md"):
            continue
        for target in LINK.findall(text):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue
            path = (REPO / name).parent / target.split("#", 1)[0]
            if not path.exists():
                broken.append(f"{name}: {target}")
    assert not broken, f"links to files that do not exist: {broken}"

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
# BitBake's own work directory under TMPDIR is no machine's path. Groups keep the literal paths
# out of this file, so a plain grep of the repository for them finds nothing.
MACHINE_PATH = re.compile(r"(?<!/tmp)/(?:work)/|\.\./(?:shared)")
PRIVATE_DOCUMENT = re.compile(r"seed[ _-]?0\d\d", re.IGNORECASE)
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


# The field corpus holds other people's machine lines exactly as posted (a CI runner's
# /home/runner/work/... path in a cviruntime assertion); they are quoted, not ours.
FIELD_CORPUS = "tests/fixtures/field/"


@pytest.fixture(scope="module")
def texts() -> dict[str, str]:
    return _text_files()


def test_nothing_mentions_a_development_machine_path(texts: dict[str, str]) -> None:
    found = [
        f"{name}:{text.count(chr(10), 0, match.start()) + 1}"
        for name, text in texts.items()
        if name != SELF and not name.startswith(FIELD_CORPUS)
        for match in MACHINE_PATH.finditer(text)
    ]
    assert not found, f"paths of a development machine (cite the upstream source instead): {found}"


def test_no_citation_of_a_private_document(texts: dict[str, str]) -> None:
    new = sorted(name for name, text in texts.items() if name != SELF and PRIVATE_DOCUMENT.search(text))
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

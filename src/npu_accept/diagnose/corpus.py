# SPDX-License-Identifier: MIT
"""Score npu-diagnose on a field corpus: real cases whose cause their public thread establishes.

    python3 -m npu_accept.diagnose.corpus [--split dev|held-out|all] [--markdown] DIR

A case is a folder with a `case.yaml` (the thread's URL, the family, the cause as the thread
establishes it, `cause_id`, `healthy`, `split`, the files) and the machine lines exactly as posted
(tests/fixtures/field/README.md).  A case is a hit when npu-diagnose's first finding names its
cause (`cause_id` is a signature id, or one of a signature's `causes`), or, for a healthy run,
when the verdict is "clean".  Exit 0 when every case could be read, 2 on a malformed case.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from npu_accept.diagnose import catalogue
from npu_accept.diagnose.findings import Context, Finding, diagnose, unexplained
from npu_accept.diagnose.sources import Document, Evidence, InputError, read_input

CASE_KEYS = {
    "id",
    "url",
    "title",
    "family",
    "soc",
    "os",
    "healthy",
    "versions",
    "cause",
    "cause_id",
    "established_by",
    "who",
    "quote",
    "split",
    "files",
    "notes",
    "round",
}
REQUIRED = ("id", "url", "family", "healthy", "cause", "cause_id", "established_by", "split", "files")
FAMILIES = ("rknpu", "rocket", "neutron", "cvitek-tpu")
SPLITS = ("dev", "held-out")


class CaseError(Exception):
    """A case folder is malformed; the message names the case and the fix."""


@dataclass(frozen=True)
class Case:
    folder: Path
    meta: dict[str, Any]

    @property
    def id(self) -> str:
        return str(self.meta["id"])

    @property
    def healthy(self) -> bool:
        return bool(self.meta["healthy"])

    @property
    def family(self) -> str:
        return str(self.meta["family"])

    @property
    def split(self) -> str:
        return str(self.meta["split"])

    @property
    def round(self) -> int:
        return int(self.meta.get("round", 1))

    @property
    def cause_id(self) -> str:
        return str(self.meta["cause_id"])

    @property
    def files(self) -> list[Path]:
        return [self.folder / str(name) for name in self.meta["files"]]


@dataclass(frozen=True)
class Outcome:
    case: Case
    verdict: str  # fault | clean | unexplained | unreadable
    findings: tuple[Finding, ...]
    left: tuple[Evidence, ...]

    @property
    def first(self) -> str | None:
        return self.findings[0].code if self.findings else None

    @property
    def hit(self) -> bool:
        if self.case.healthy:
            return self.verdict == "clean"
        if not self.findings:
            return False
        sig = catalogue.load().by_id(self.findings[0].code)
        return sig.names(self.case.cause_id) if sig else self.findings[0].code == self.case.cause_id

    @property
    def why(self) -> str:
        """In words, what npu-diagnose answered (for the misses' table)."""
        if self.verdict == "fault":
            return f"first finding {self.first}"
        return self.verdict


def load_case(folder: Path) -> Case:
    path = folder / "case.yaml"
    try:
        meta = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise CaseError(f"{path} cannot be read as YAML ({exc}); fix the file.") from None
    if not isinstance(meta, dict):
        raise CaseError(f"{path} is not a mapping; see tests/fixtures/field/README.md.")
    missing = [k for k in REQUIRED if k not in meta]
    extra = sorted(set(meta) - CASE_KEYS)
    if missing or extra:
        what = f"lacks {', '.join(missing)}" if missing else f"has the unknown key {extra[0]}"
        raise CaseError(f"{path} {what}; the keys are in tests/fixtures/field/README.md.")
    if meta["id"] != folder.name:
        raise CaseError(f"{path}: id {meta['id']!r} is not the folder's name {folder.name!r}.")
    if meta["family"] not in FAMILIES or meta["split"] not in SPLITS:
        raise CaseError(f"{path}: family must be one of {FAMILIES} and split one of {SPLITS}.")
    collected = meta.get("round", 1)
    if type(collected) is not int or collected < 1:
        raise CaseError(f"{path}: round must be a whole number from 1 (the corpus's collecting round).")
    case = Case(folder, meta)
    for file in case.files:
        if not file.is_file():
            raise CaseError(f"{path} names {file.name}, which is not in the folder.")
    return case


def load_cases(root: Path) -> list[Case]:
    return [load_case(folder) for folder in sorted(root.iterdir()) if (folder / "case.yaml").is_file()]


def run_case(case: Case) -> Outcome:
    """npu-diagnose on the case's files, as a user gives them (no --board)."""
    try:
        docs: list[Document] = [read_input(str(file)) for file in case.files]
    except InputError:
        return Outcome(case, "unreadable", (), ())
    if not any(doc.kinds for doc in docs):
        return Outcome(case, "unreadable", (), ())
    ctx = Context(docs)
    findings = diagnose(ctx)
    left = unexplained(ctx, findings)
    verdict = "fault" if findings else ("unexplained" if left else "clean")
    return Outcome(case, verdict, tuple(findings), tuple(left))


def score(outcomes: Iterable[Outcome]) -> tuple[int, int]:
    chosen = list(outcomes)
    return sum(o.hit for o in chosen), len(chosen)


def table(outcomes: list[Outcome]) -> str:
    """The per-family table of docs/npu-diagnose.md: cases, hits, and each miss with its answer."""
    rows = ["| family | split | cases | hits | misses (case: answer) |", "| --- | --- | --- | --- | --- |"]
    for family in FAMILIES:
        for split in SPLITS:
            chosen = [o for o in outcomes if o.case.family == family and o.case.split == split]
            if not chosen:
                continue
            hits, total = score(chosen)
            misses = "; ".join(f"{o.case.id}: {o.why}" for o in chosen if not o.hit) or "—"
            rows.append(f"| {family} | {split} | {total} | {hits} | {misses} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m npu_accept.diagnose.corpus", description=__doc__)
    parser.add_argument("root", type=Path, metavar="DIR")
    parser.add_argument("--split", choices=("dev", "held-out", "all"), default="all")
    parser.add_argument("--markdown", action="store_true", help="print the per-family table")
    args = parser.parse_args(argv)
    try:
        cases = load_cases(args.root)
    except (CaseError, OSError) as exc:
        print(f"corpus: {exc}", file=sys.stderr)
        return 2
    chosen = [c for c in cases if args.split == "all" or c.split == args.split]
    outcomes = [run_case(c) for c in chosen]
    if args.markdown:
        print(table(outcomes))
    else:
        for o in outcomes:
            print(f"{'hit ' if o.hit else 'MISS'} {o.case.split:8} {o.case.id}: {o.case.cause_id} <- {o.why}")
    for split in SPLITS:
        hits, total = score(o for o in outcomes if o.case.split == split)
        if total:
            print(f"{split}: {hits}/{total} ({100 * hits / total:.0f} %)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

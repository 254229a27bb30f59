# SPDX-License-Identifier: MIT
"""npu-diagnose: read the logs, print-outs and outputs a user has, and name the most likely cause.

    npu-diagnose [--board PROFILE] [--json] FILE…      (FILE '-' = standard input)

Exit 0: nothing wrong found; 1: at least one finding; 2: nothing could be read (or bad usage);
3: error lines that no signature explains, and no finding.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import NoReturn

from npu_accept.diagnose import catalogue
from npu_accept.diagnose.findings import Context, Finding, diagnose, unexplained
from npu_accept.diagnose.sources import Document, Evidence, InputError, read_input
from npu_accept.profile import Profile, ProfileError, load_profile

EXIT_CLEAN, EXIT_FAULT, EXIT_UNREADABLE, EXIT_UNEXPLAINED = 0, 1, 2, 3
SHOWN_UNEXPLAINED = 3
REPORT_HOW = (
    "send these lines with the thread or issue that established their cause to the meta-npu "
    "maintainers (docs/npu-diagnose.md, 'Adding a signature') so a signature can be added"
)
SCHEMA = "npu-diagnose/1"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise InputError(f"{message}; see npu-diagnose --help.")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="npu-diagnose",
        description=(
            "Read NPU logs (label_image / benchmark_model, neutron-converter --dump-statistics, dmesg, "
            "RKNN runtime, model_runner), npu-info --json, .npy outputs and .rknn / .cvimodel files, "
            "and print the most likely causes of a fault with the evidence lines."
        ),
    )
    parser.add_argument("files", nargs="*", metavar="FILE", help="an input file, or - for standard input")
    parser.add_argument(
        "--signatures", action="store_true", help="list the signature catalogue instead of reading inputs"
    )
    parser.add_argument(
        "--family", metavar="FAMILY", help="with --signatures: only this family's (and any family's)"
    )
    parser.add_argument("--board", metavar="PROFILE", help="board profile (name or YAML file) of the board")
    parser.add_argument("--json", action="store_true", help="print the diagnosis as JSON (npu-diagnose/1)")
    return parser


def _profile(board: str | None) -> Profile | None:
    if board is None:
        return None
    try:
        return load_profile(board)
    except ProfileError as exc:
        raise InputError(str(exc).rstrip(".")) from None


def _where(evidence: Evidence) -> str:
    return f"{evidence.source}:{evidence.line_no}" if evidence.line_no else evidence.source


def render(docs: list[Document], findings: list[Finding], left: list[Evidence]) -> str:
    lines = ["Inputs:"]
    lines += [f"  {doc.name}: {doc.described}" for doc in docs]
    if findings:
        lines.append(f"Findings, most likely cause first ({len(findings)}):")
    for number, finding in enumerate(findings, start=1):
        lines.append(f"{number}. {finding.sentence}")
        for evidence in finding.evidence:
            lines.append(f'   evidence {_where(evidence)}: "{evidence.quoted()}"')
        lines.append(f"   do: {finding.action}")
    if left and not findings:
        quoted = "; ".join(f'{_where(e)}: "{e.quoted()}"' for e in left[:SHOWN_UNEXPLAINED])
        more = f" (and {len(left) - SHOWN_UNEXPLAINED} more)" if len(left) > SHOWN_UNEXPLAINED else ""
        lines.append(f"Unexplained: no signature explains these error lines: {quoted}{more}; {REPORT_HOW}.")
    elif left:
        lines.append(f"Error lines no signature explains ({len(left)}):")
        lines += [f'   {_where(e)}: "{e.quoted()}"' for e in left[:SHOWN_UNEXPLAINED]]
    elif not findings:
        lines.append("No fault found in these inputs.")
    return "\n".join(lines)


def as_json(
    docs: list[Document], findings: list[Finding], verdict: str, left: list[Evidence] | None = None
) -> str:
    return json.dumps(
        {
            "schema": SCHEMA,
            "verdict": verdict,
            "inputs": [{"name": d.name, "recognised": d.kinds} for d in docs],
            "findings": [f.as_dict() for f in findings],
            "unexplained": [e.as_dict() for e in left or []],
        },
        indent=1,
        ensure_ascii=False,
    )


def list_signatures(family: str | None) -> str:
    """The catalogue as a table: id, family, rank, what fires it, its sources."""
    entries = catalogue.load().for_family(family).signatures
    rows = ["id\tfamily\trank\tkind\tlearnt from"]
    for sig in sorted(entries, key=lambda s: (s.rank, s.id)):
        kind = "kernel" if sig.kernel else ("code" if sig.rule == "python" else "lines")
        rows.append(f"{sig.id}\t{sig.family}\t{sig.rank}\t{kind}\t{' '.join(sig.learnt_from) or '-'}")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        if args.signatures:
            print(list_signatures(_family(args.family)))
            return EXIT_CLEAN
        if not args.files:
            raise InputError("the following arguments are required: FILE")
        profile = _profile(args.board)
        docs = [read_input(spec, sys.stdin) for spec in args.files]
    except (InputError, catalogue.CatalogueError) as exc:
        print(f"npu-diagnose: {exc}", file=sys.stderr)
        return EXIT_UNREADABLE
    if not any(doc.kinds for doc in docs):
        names = ", ".join(d.name for d in docs)
        print(
            f"npu-diagnose: nothing in {names} is a log, print-out or output it can read; give a "
            "label_image / benchmark_model log, neutron-converter statistics, dmesg, logcat, an RKNN or "
            "model_runner log, npu-info --json, or .npy outputs.",
            file=sys.stderr,
        )
        if args.json:
            print(as_json(docs, [], "unreadable"))
        return EXIT_UNREADABLE
    ctx = Context(docs, profile)
    findings = diagnose(ctx)
    left = unexplained(ctx, findings)
    verdict = "fault" if findings else ("unexplained" if left else "clean")
    print(as_json(docs, findings, verdict, left) if args.json else render(docs, findings, left))
    return {"fault": EXIT_FAULT, "unexplained": EXIT_UNEXPLAINED, "clean": EXIT_CLEAN}[verdict]


def _family(family: str | None) -> str | None:
    if family is None:
        return None
    from npu_accept import families

    known = sorted(families.family_name(p) for p in families.packages() if p != "any")
    if family not in known:
        raise InputError(f"unknown family '{family}'; the families are {', '.join(known)}")
    return family


if __name__ == "__main__":
    sys.exit(main())

# SPDX-License-Identifier: MIT
"""npu-diagnose: read the logs, print-outs and outputs a user has, and name the most likely cause.

    npu-diagnose [--board PROFILE] [--json] FILE…      (FILE '-' = standard input)

Exit 0: nothing wrong found; 1: at least one finding; 2: nothing could be read (or bad usage).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import NoReturn

from npu_accept.diagnose.findings import Context, Finding, diagnose
from npu_accept.diagnose.sources import Document, InputError, read_input
from npu_accept.profile import Profile, ProfileError, load_profile

EXIT_CLEAN, EXIT_FAULT, EXIT_UNREADABLE = 0, 1, 2
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
    parser.add_argument("files", nargs="+", metavar="FILE", help="an input file, or - for standard input")
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


def render(docs: list[Document], findings: list[Finding]) -> str:
    lines = ["Inputs:"]
    lines += [f"  {doc.name}: {doc.described}" for doc in docs]
    if not findings:
        lines.append("No fault found in these inputs.")
        return "\n".join(lines)
    lines.append(f"Findings, most likely cause first ({len(findings)}):")
    for number, finding in enumerate(findings, start=1):
        lines.append(f"{number}. {finding.sentence}")
        for evidence in finding.evidence:
            where = f"{evidence.source}:{evidence.line_no}" if evidence.line_no else evidence.source
            lines.append(f'   evidence {where}: "{evidence.quoted()}"')
        lines.append(f"   do: {finding.action}")
    return "\n".join(lines)


def as_json(docs: list[Document], findings: list[Finding], verdict: str) -> str:
    return json.dumps(
        {
            "schema": SCHEMA,
            "verdict": verdict,
            "inputs": [{"name": d.name, "recognised": d.kinds} for d in docs],
            "findings": [f.as_dict() for f in findings],
        },
        indent=1,
        ensure_ascii=False,
    )


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        profile = _profile(args.board)
        docs = [read_input(spec, sys.stdin) for spec in args.files]
    except InputError as exc:
        print(f"npu-diagnose: {exc}", file=sys.stderr)
        return EXIT_UNREADABLE
    if not any(doc.kinds for doc in docs):
        names = ", ".join(d.name for d in docs)
        print(
            f"npu-diagnose: nothing in {names} is a log, print-out or output it can read; give a "
            "label_image / benchmark_model log, neutron-converter statistics, dmesg, an RKNN or "
            "model_runner log, npu-info --json, or .npy outputs.",
            file=sys.stderr,
        )
        if args.json:
            print(as_json(docs, [], "unreadable"))
        return EXIT_UNREADABLE
    findings = diagnose(Context(docs, profile))
    verdict = "fault" if findings else "clean"
    print(as_json(docs, findings, verdict) if args.json else render(docs, findings))
    return EXIT_FAULT if findings else EXIT_CLEAN


if __name__ == "__main__":
    sys.exit(main())

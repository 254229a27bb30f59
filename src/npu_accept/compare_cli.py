# SPDX-License-Identifier: MIT
"""npu-compare: compare a user's output dump with a reference dump (exit 0 match, 1 mismatch, 2 bad input)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import NoReturn

import numpy as np

from npu_accept.compare import Verdict, compare, thresholds_from_profile
from npu_accept.profile import ProfileError, load_profile

EXIT_MATCH, EXIT_MISMATCH, EXIT_BAD_INPUT = 0, 1, 2
PROFILE_DIR = Path("pytests/profiles")


class BadInput(Exception):
    """One sentence naming the bad argument or file and the fix."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise BadInput(f"{message}; see npu-compare --help.")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="npu-compare",
        description=(
            "Compare OUT.npy with REF.npy after dequantization: cosine, euclidean similarity, SQNR, "
            "top-k agreement, max abs error and a degenerate-output detector."
        ),
    )
    parser.add_argument("ref", type=Path, metavar="REF.npy", help="reference output (e.g. CPU)")
    parser.add_argument("out", type=Path, metavar="OUT.npy", help="output to judge (e.g. NPU)")
    parser.add_argument("--scale", type=float, help="quantization scale of integer arrays (both files)")
    parser.add_argument("--zero-point", type=int, default=0, help="quantization zero point (both files)")
    parser.add_argument("--profile", help="board profile name or YAML file with the model's thresholds")
    parser.add_argument("--model", help="model name in the profile whose thresholds apply")
    parser.add_argument("--json", action="store_true", help="print the verdict as JSON")
    return parser


def load_array(path: Path) -> np.ndarray:
    if not path.is_file():
        raise BadInput(f"{path} does not exist; give the path of a .npy file.")
    try:
        return np.load(path, allow_pickle=False)
    except (ValueError, OSError, EOFError):
        raise BadInput(f"{path} is not a .npy file; save arrays with numpy.save.") from None


def profile_thresholds(profile: str | None, model: str | None) -> dict[str, float] | None:
    if profile is None and model is None:
        return None
    if profile is None or model is None:
        raise BadInput("--profile and --model go together; give both or neither.")
    try:
        spec = load_profile(profile, PROFILE_DIR)
    except ProfileError as exc:
        raise BadInput(str(exc).rstrip(".") + ".") from None
    for entry in spec.models:
        if entry.name == model:
            return dict(entry.thresholds)
    known = ", ".join(m.name for m in spec.models) or "none"
    raise BadInput(f"profile {profile} has no model '{model}'; use one of: {known}.")


def render(verdict: Verdict) -> str:
    lines = []
    for key, value in verdict.metrics.items():
        limit = verdict.thresholds.get(key)
        shown = "n/a" if value is None else f"{value:.6g}"
        lines.append(f"{key:12s} {shown}" + (f"   (threshold {limit:g})" if limit is not None else ""))
    lines.append(("MATCH: " if verdict.passed else "MISMATCH: ") + verdict.sentence)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        thresholds = thresholds_from_profile(profile_thresholds(args.profile, args.model))
        ref = load_array(args.ref)
        out = load_array(args.out)
        for path, array in ((args.ref, ref), (args.out, out)):
            if np.issubdtype(array.dtype, np.integer) and not args.scale:
                raise BadInput(
                    f"{path} holds {array.dtype.name} values; give --scale and --zero-point "
                    "(from npu-run's JSON) so they can be dequantized."
                )
            if not (np.issubdtype(array.dtype, np.number) or array.dtype == np.bool_):
                raise BadInput(f"{path} holds {array.dtype} values, not numbers; save a numeric array.")
        quant = (args.scale or 0.0, args.zero_point)
        try:
            verdict = compare(ref, out, thresholds, ref_quant=quant, out_quant=quant)
        except ValueError as exc:
            raise BadInput(f"{exc}.") from None
    except BadInput as exc:
        print(f"npu-compare: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except ValueError as exc:
        print(f"npu-compare: {exc}.", file=sys.stderr)
        return EXIT_BAD_INPUT
    print(json.dumps(verdict.to_dict(), indent=1) if args.json else render(verdict))
    return EXIT_MATCH if verdict.passed else EXIT_MISMATCH


if __name__ == "__main__":
    sys.exit(main())

# SPDX-License-Identifier: MIT
"""npu-compare: compare a user's output dump with a reference dump.

Exit codes: 0 the output matches, 1 it does not (a verdict), 2 anything else (bad arguments, a
file that is missing, not a .npy, pickled, complex, lying about its size, a shape mismatch, too
little memory...), always as one sentence on stderr and never a traceback. Both files are read in
chunks, so memory stays far below the size of one input.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from npu_accept import npyio
from npu_accept.compare import Tensor, Verdict, compare

EXIT_MATCH, EXIT_MISMATCH, EXIT_BAD_INPUT = 0, 1, 2


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
            "max abs error, a degenerate-output detector, and top-k agreement where the tensor holds "
            "class scores. Exit 0 match, 1 mismatch, 2 bad input."
        ),
    )
    parser.add_argument("ref", type=Path, metavar="REF.npy", help="reference output (e.g. CPU)")
    parser.add_argument("out", type=Path, metavar="OUT.npy", help="output to judge (e.g. NPU)")
    parser.add_argument("--scale", type=float, help="quantization scale of integer arrays (both files)")
    parser.add_argument("--zero-point", type=int, default=0, help="quantization zero point (both files)")
    parser.add_argument("--profile", help="board profile name or YAML file with the model's thresholds")
    parser.add_argument("--model", help="model name in the profile whose thresholds apply")
    parser.add_argument(
        "--profiles-dir",
        type=Path,
        action="append",
        default=[],
        metavar="DIR",
        help="a directory of your own board profiles, searched before the shipped ones (repeatable)",
    )
    parser.add_argument(
        "--top-k",
        type=int,
        metavar="K",
        help="judge top-K agreement per row of the last axis (class scores) whatever the tensor holds",
    )
    parser.add_argument("--json", action="store_true", help="print the verdict as JSON")
    return parser


def profile_thresholds(
    profile: str | None, model: str | None, profiles_dirs: Sequence[Path] = ()
) -> dict[str, float] | None:
    if profile is None and model is None:
        return None
    if profile is None or model is None:
        raise BadInput("--profile and --model go together; give both or neither.")
    from npu_accept.paths import profile_dirs
    from npu_accept.profile import ProfileError, load_profile  # jsonschema: only when needed

    try:
        spec = load_profile(profile, profile_dirs(profiles_dirs))
    except ProfileError as exc:
        raise BadInput(str(exc).rstrip(".") + ".") from None
    for entry in spec.models:
        if entry.name == model:
            return dict(entry.thresholds)
    known = ", ".join(m.name for m in spec.models) or "none"
    raise BadInput(f"profile {profile} has no model '{model}'; use one of: {known}.")


def open_tensor(path: Path, scale: float | None, zero_point: int) -> Tensor:
    """The checked .npy file as a chunked Tensor (a pipe: read whole, bounded, never waiting for
    a writer that does not come); integers need a scale to be dequantized."""
    if npyio.is_pipe(path):
        tensor = Tensor.from_array(
            npyio.load_bytes(npyio.read_pipe(path), str(path)), (scale or 0.0, zero_point)
        )
    else:
        tensor = Tensor.from_npy(path, (scale or 0.0, zero_point))
    if tensor.dtype.kind in "iu" and not scale:
        raise BadInput(
            f"{path} holds {tensor.dtype.name} values; give --scale and --zero-point "
            "(from npu-run's JSON) so they can be dequantized."
        )
    return tensor


def render(verdict: Verdict) -> str:
    lines = []
    for key, value in verdict.metrics.items():
        limit = verdict.thresholds.get(key)
        shown = "n/a" if value is None else f"{value:.6g}"
        note = f"   (threshold {limit:g})" if limit is not None else ""
        if key == "top_k_agree" and verdict.top_k_rule:
            note += f"   — {verdict.top_k_rule}"
        lines.append(f"{key:12s} {shown}{note}")
    lines.append(("MATCH: " if verdict.passed else "MISMATCH: ") + verdict.sentence)
    return "\n".join(lines)


def judge(args: argparse.Namespace) -> Verdict:
    thresholds: dict[str, Any] = dict(profile_thresholds(args.profile, args.model, args.profiles_dir) or {})
    if args.top_k is not None:
        if args.top_k < 1:
            raise BadInput(f"--top-k must be at least 1, not {args.top_k}.")
        thresholds["top_k"] = args.top_k
    ref = open_tensor(args.ref, args.scale, args.zero_point)
    out = open_tensor(args.out, args.scale, args.zero_point)
    return compare(ref, out, thresholds)


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        verdict = judge(args)
    except BadInput as exc:
        return _fail(str(exc))
    except ValueError as exc:  # npyio.NpyError, a shape mismatch, a bad threshold: one sentence each
        return _fail(str(exc).rstrip(".") + ".")
    except MemoryError:
        return _fail("ran out of memory; free memory or compare smaller tensors.")
    except KeyboardInterrupt:
        return _fail("interrupted; nothing was judged.")
    except Exception as exc:  # a verdict is 0 or 1; anything unforeseen is still one sentence and 2
        return _fail(f"could not compare ({type(exc).__name__}: {exc}); please report this.")
    try:
        print(json.dumps(verdict.to_dict(), indent=1) if args.json else render(verdict))
        sys.stdout.flush()
    except (BrokenPipeError, OSError):
        pass
    return EXIT_MATCH if verdict.passed else EXIT_MISMATCH


def _fail(sentence: str) -> int:
    print(f"npu-compare: {sentence}", file=sys.stderr)
    return EXIT_BAD_INPUT


if __name__ == "__main__":
    sys.exit(main())

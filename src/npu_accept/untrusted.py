# SPDX-License-Identifier: MIT
"""Board data is untrusted input: JSON from the board is parsed with size, depth and value limits,
validated against its schema (src/npu_accept/schemas) and checked for values no real board has;
names the board chooses are checked before they touch the host.

Every refusal is a :class:`BoardDataError` whose message is one sentence; board text in it is
shown through :func:`npu_accept.transport.visible` (escape sequences visible, a few hundred
characters at most).
"""

from __future__ import annotations

import json
import math
import posixpath
import re
from typing import Any

from npu_accept import schemaload
from npu_accept.memo import shared
from npu_accept.transport import visible
from npu_accept.validation import Validator

MAX_JSON_BYTES = 1 << 20  # npu-info and npu-run print a few KiB
MAX_JSON_DEPTH = 32  # the deepest document the tools print is 5 levels; a build manifest adds a few
MAX_JSON_VALUES = 100_000
MAX_ELEMENTS = 1 << 31  # elements of one output tensor
_OUTPUT_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,127}\.npy")


class BoardDataError(ValueError):
    """What a board printed cannot be used; the message is one sentence naming what and why."""


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not a JSON number")


def parse_json(data: bytes, what: str, max_bytes: int = MAX_JSON_BYTES) -> Any:
    """The JSON value in ``data`` (what ``what`` printed), within the size, depth and count limits."""
    if len(data) > max_bytes:
        raise BoardDataError(
            f"{what} printed {len(data)} bytes, more than the {max_bytes} a JSON report may have; "
            "the board's tools or python3 are not the suite's."
        )
    text = data.decode("utf-8", "replace").strip()
    if not text:
        raise BoardDataError(f"{what} printed nothing on stdout")
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except RecursionError:
        raise BoardDataError(
            f"{what} printed JSON nested too deep to parse (over {MAX_JSON_DEPTH} levels)"
        ) from None
    except ValueError as exc:
        raise BoardDataError(f"{what} printed no valid JSON ({visible(exc, 120)})") from None
    _check_extent(value, what)
    return value


def _check_extent(value: Any, what: str) -> None:
    """Depth, value count and finite numbers, walked without recursion."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    count = 0
    while stack:
        item, depth = stack.pop()
        count += 1
        if depth > MAX_JSON_DEPTH:
            raise BoardDataError(f"{what} printed JSON nested deeper than {MAX_JSON_DEPTH} levels")
        if count > MAX_JSON_VALUES:
            raise BoardDataError(f"{what} printed JSON with more than {MAX_JSON_VALUES} values")
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)
        elif isinstance(item, float) and not math.isfinite(item):
            raise BoardDataError(f"{what} printed a number out of range ({visible(item)})")


@shared()
def _validator(schema: str) -> Validator:
    return Validator(schemaload.load(schema))


def validated(data: bytes, schema: str, what: str) -> dict[str, Any]:
    """The report ``what`` printed, checked against ``schemas/<schema>.schema.json`` and for
    values no board has; BoardDataError otherwise."""
    value = parse_json(data, what)
    if not isinstance(value, dict):
        raise BoardDataError(f"{what} printed a JSON {type(value).__name__}, not the {schema} object")
    error = _validator(schema).best_error(value)
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "the top level"
        raise BoardDataError(
            f"{what} printed a report that breaks its {schema} schema at {visible(where, 80)} "
            f"({visible(error.message, 160)})"
        )
    if schema == "npu-run":
        _check_run(value, what)
    return value


def _check_run(report: dict[str, Any], what: str) -> None:
    nodes = report["nodes"]
    if nodes["total"] is not None and nodes["delegated"] > nodes["total"]:
        raise BoardDataError(f"{what} claims {nodes['delegated']} delegated nodes of {nodes['total']} in all")
    for tensor in report["outputs"]:
        if math.prod(tensor["shape"]) > MAX_ELEMENTS:
            raise BoardDataError(
                f"{what} claims an output of shape {visible(tensor['shape'], 80)}, more than "
                f"{MAX_ELEMENTS} values"
            )


def output_name(name: str, directory: str, what: str) -> str:
    """The plain ``*.npy`` name of an output file the board reported, given as a name or as a path
    in the run's output ``directory``; anything else (another directory, ``..``) is refused."""
    if "/" in name:
        head, _, base = name.rpartition("/")
        if posixpath.normpath(head) != posixpath.normpath(directory):
            base = ""
        name_ok = bool(base) and _OUTPUT_NAME.fullmatch(base) is not None
    else:
        base = name
        name_ok = _OUTPUT_NAME.fullmatch(name) is not None
    if not name_ok:
        raise BoardDataError(
            f"{what} named an output file {visible(name, 80)!r} that is not a plain .npy file in its "
            "output directory"
        )
    return base

# SPDX-License-Identifier: MIT
"""The rknpu family's npu-diagnose rules: a model of a newer RKNN-Toolkit2 than librknnrt,
rknn_server down or of another release, and a runtime whose release documents a newer RKNPU
driver than the board's (the rows of families/rknpu/versions.yaml).
"""

from __future__ import annotations

import re

from npu_accept.diagnose import pairings
from npu_accept.diagnose.findings import Context, Finding, Rule, first_hit
from npu_accept.diagnose.sources import Evidence
from npu_accept.families.rknpu import pairing

RKNN_RUNTIME = re.compile(r"librknnrt version: (?P<v>\d+(?:\.\d+)+)")
RKNN_SERVER = re.compile(r"(?:rknn_server version: |start rknn server, version:\s*)(?P<v>\d+(?:\.\d+)+)")
RKNN_MODEL_INFO = re.compile(
    r"RKNN Model Information, version: (?P<format>\d+), toolkit version: (?P<v>\d+(?:\.\d+)+)"
)


def rknn(ctx: Context) -> list[Finding]:
    runtime = first_hit(ctx, RKNN_RUNTIME)
    return _rknn_pairing(ctx, runtime) + _rknn_server(ctx, runtime)


def _runtime_version(
    ctx: Context, runtime: tuple[Evidence, re.Match[str]] | None
) -> tuple[str, Evidence] | None:
    if runtime:
        return runtime[1].group("v"), runtime[0]
    for doc in ctx.of("npu-info"):
        version = ((doc.json or {}).get("runtime") or {}).get("version")
        if version and (doc.json or {}).get("family") == "rknpu":
            return str(version), Evidence(doc.name, None, f'"runtime": {{"version": "{version}"}}')
    return None


def _rknn_pairing(ctx: Context, runtime: tuple[Evidence, re.Match[str]] | None) -> list[Finding]:
    board = _runtime_version(ctx, runtime)
    if board is None:
        return []
    made: list[tuple[str, Evidence]] = []
    for doc in ctx.of("rknn-model"):
        info = pairing.rknn_model_info(doc.data)
        if info and info.toolkit_version:
            made.append(
                (info.toolkit_version, Evidence(doc.name, None, f'"version": "{info.toolkit_version}"'))
            )
    model_line = first_hit(ctx, RKNN_MODEL_INFO)
    if model_line:
        made.append((model_line[1].group("v"), model_line[0]))
    for toolkit, evidence in made:
        clause = pairing.rknn_mismatch(toolkit, board[0])
        if clause:
            return [
                Finding(
                    16,
                    "rknn-toolkit-runtime",
                    f"The model and the runtime do not pair: {clause}.",
                    "Install librknnrt and rknn_server of the toolkit's release (airockchip/rknn-toolkit2 "
                    f"rknpu2/runtime), or export the model with RKNN-Toolkit2 {board[0]}.",
                    (evidence, board[1]),
                )
            ]
    return []


def _rknn_server(ctx: Context, runtime: tuple[Evidence, re.Match[str]] | None) -> list[Finding]:
    for doc in ctx.of("npu-info"):
        info = doc.json or {}
        daemon = info.get("daemon") or {}
        if info.get("family") == "rknpu" and daemon.get("path") and daemon.get("running") is False:
            return [
                Finding(
                    27,
                    "rknn-server-down",
                    "rknn_server is installed but not running, so RKNN-Toolkit2 cannot reach the board.",
                    "Start it (systemctl start rknn-server; with BusyBox init, the image's "
                    "/etc/init.d/*rknn* script) and enable it.",
                    (Evidence(doc.name, None, '"daemon": {"running": false}'),),
                )
            ]
    server = first_hit(ctx, RKNN_SERVER)
    board = _runtime_version(ctx, runtime)
    if server and board and pairings.version_tuple(server[1].group("v")) != pairings.version_tuple(board[0]):
        return [
            Finding(
                27,
                "rknn-server-version",
                f"rknn_server {server[1].group('v')} and librknnrt {board[0]} are of different releases.",
                "Install rknn_server and librknnrt from the same RKNN SDK release (rknpu2/runtime of "
                "airockchip/rknn-toolkit2).",
                (server[0], board[1]),
            )
        ]
    return []


# --- rknn-driver-below-documented-minimum: version knowledge (families/*/versions.yaml) ---------
# A runtime whose own release documents a newer RKNPU kernel driver than the one the inputs print
# (a confirmed `needs_driver` row of pairings.KNOWN_PAIRINGS); recommendations are never asserted.
RKNPU_RUNTIME_FACTS = (("rkllm", "rkllm-runtime"), ("librknnrt", "librknnrt"))


def rknn_driver_below_minimum(ctx: Context) -> list[Finding]:
    if ctx.family not in (None, "rknpu"):
        return []
    driver = _rknpu_fact_line(ctx, "driver")
    if driver is None:
        return []
    for fact, component in RKNPU_RUNTIME_FACTS:
        runtime = _rknpu_fact_line(ctx, fact)
        row = pairings.driver_requirement(component, runtime[1]) if runtime else None
        if runtime is None or row is None or not row.needs_driver:
            continue
        has, needs = pairings.version_tuple(driver[1]), pairings.version_tuple(row.needs_driver)
        if has is None or needs is None or has >= needs:
            continue
        where = _rknpu_row_source(row)
        evidence = (
            (runtime[0],)
            if (runtime[0].source, runtime[0].line_no)
            == (
                driver[0].source,
                driver[0].line_no,
            )
            else (runtime[0], driver[0])
        )
        return [
            Finding(
                17,  # after the runtime's own refusals (device 12, model 15-16): a documented minimum
                "rknn-driver-below-documented-minimum",
                f"{component} {runtime[1]} needs RKNPU kernel driver {row.needs_driver} or newer ({where}), "
                f"but the board's driver is {driver[1]}.",
                f"Update the kernel's RKNPU driver to {row.needs_driver} or newer (a newer vendor kernel for "
                "the board, or the driver of airockchip/rknn-llm rknpu-driver/ built into the board's "
                "kernel), or use a runtime release whose documentation accepts the board's driver.",
                evidence,
            )
        ]
    return []


def _rknpu_fact_line(ctx: Context, name: str) -> tuple[Evidence, str] | None:
    """The first input line holding the catalogue fact NAME, and its value."""
    patterns = ctx.catalogue.facts.get(name, ())
    for doc in ctx.text_docs():
        for line in doc.records:
            for pattern in patterns:
                match = pattern.search(line.message)
                if match:
                    return Evidence(doc.name, line.number, line.raw, match.group(0)), match.group("v")
    return None


def _rknpu_row_source(row: pairings.Pairing) -> str:
    """'its release's documentation, airockchip/rknn-llm at 8623edd0' from a row's URL and commit."""
    repo = re.match(r"https://github\.com/([^/]+/[^/]+)/", row.url or "")
    if repo and row.commit:
        return f"its release's documentation, {repo.group(1)} at {row.commit[:8]}"
    return "its release's documentation"


RULES: tuple[Rule, ...] = (rknn, rknn_driver_below_minimum)

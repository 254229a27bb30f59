# SPDX-License-Identifier: MIT
"""The cvitek-tpu family's npu-diagnose rules: a cvimodel compiled for another CV18xx chip than
the board's.
"""

from __future__ import annotations

from npu_accept.diagnose.findings import Context, Finding, Rule
from npu_accept.diagnose.sources import Evidence

CVI_CHIPS = ("cv180x", "cv181x", "cv182x", "cv183x")


def cv18xx(ctx: Context) -> list[Finding]:
    return _cvimodel_files(ctx)


def _cvimodel_files(ctx: Context) -> list[Finding]:
    board = _board_chip(ctx)
    findings = []
    for doc in ctx.of("cvimodel"):
        chip = doc.data[30:46].split(b"\0")[0].decode("ascii", "replace") if len(doc.data) >= 48 else ""
        if board and chip in CVI_CHIPS and chip != board:
            findings.append(
                Finding(
                    15,
                    "cvimodel-chip",
                    f"The cvimodel {doc.name} was built for {chip} but the board is {board}.",
                    f"Compile the model again with model_deploy --processor {board}.",
                    (Evidence(doc.name, None, f"chip {chip} (header byte 30)"),),
                )
            )
    return findings


def _board_chip(ctx: Context) -> str | None:
    compatibles = list(((ctx.npu_info().get("soc") or {}).get("compatible")) or [])
    if ctx.profile is not None:
        compatibles += list(ctx.profile.soc.compatible)
    for value in compatibles:
        name = str(value).partition(",")[2]
        if name in CVI_CHIPS:
            return name
    return None


RULES: tuple[Rule, ...] = (cv18xx,)

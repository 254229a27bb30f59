# SPDX-License-Identifier: MIT
"""The neutron family's npu-diagnose rules: the i.MX95 silicon revision, a converter that printed no
performance model, and a Neutron SDK or delegate of another BSP than the board's.
"""

from __future__ import annotations

import re

from npu_accept.diagnose import pairings
from npu_accept.diagnose.findings import Context, Finding, Rule
from npu_accept.diagnose.sources import STATED_REVISION, Evidence, quote
from npu_accept.families.neutron import pairing
from npu_accept.logparse import DELEGATE_VERSION

# /sys/devices/soc0/revision of the i.MX95 (see IMX95_BAD in npu_accept.diagnose.findings).
IMX95_REVISIONS = {"1.0": "A0", "1.1": "A1", "2.0": "B0"}
UBOOT_CPU = re.compile(r"CPU:\s+i\.MX(?P<soc>\w+) rev(?P<rev>\d+\.\d+)")
CLOCK = re.compile(r"Clock Frequency:\s*(?P<v>-?[\d.]+|-?nan)\s*MHz", re.IGNORECASE)
CYCLES = re.compile(r"Clock cycles per inference:\s*(?P<v>-?[\d,.]+|-?nan)", re.IGNORECASE)
LATENCY = re.compile(r"Latency per inference:\s*(?P<v>-?[\d.]+|-?nan)", re.IGNORECASE)


def silicon(ctx: Context) -> list[Finding]:
    if not ctx.is_imx95():
        return []
    for revision, evidence, where in _revisions(ctx):
        label = ctx.bad_revisions().get(revision) if revision in IMX95_REVISIONS else None
        label = label or (revision if revision in ("A0", "A1") else None)
        if label is None:
            continue
        shown = revision if revision in ("A0", "A1") else f"{label} (revision {revision})"
        return [
            Finding(
                10,
                "silicon-revision",
                f"The SoC is i.MX95 {shown}, {where}: NPU acceleration is supported on B0 silicon only, "
                "so an A-silicon board runs the model but its NPU outputs cannot be trusted.",
                "Run on a board with i.MX95 B0 silicon (/sys/devices/soc0/revision 2.0); no software "
                "change makes A0/A1 silicon pass.",
                (evidence,) if evidence else (),
            )
        ]
    return []


def _revisions(ctx: Context) -> list[tuple[str, Evidence | None, str]]:
    """(revision or A0/A1 label, evidence, where it was read), strongest source first."""
    found: list[tuple[str, Evidence | None, str]] = []
    for doc in ctx.of("npu-info"):
        revision = ((doc.json or {}).get("soc") or {}).get("revision")
        if revision:
            found.append(
                (str(revision), Evidence(doc.name, None, f'"revision": "{revision}"'), "from npu-info")
            )
    for doc in ctx.of("soc-revision"):
        found.append(
            (doc.text.strip(), Evidence(doc.name, 1, doc.text.strip()), "from /sys/devices/soc0/revision")
        )
    for doc in ctx.of("uboot-log"):
        for evidence, match in doc.grep(UBOOT_CPU):
            if match.group("soc") == "95":
                found.append((match.group("rev"), evidence, "from U-Boot's CPU line"))
    for doc in ctx.of("report-text"):
        for evidence, match in doc.grep(STATED_REVISION):
            found.append((match.group("label").upper(), evidence, "as the report states"))
    return found


def converter_without_model(ctx: Context) -> list[Finding]:
    findings = []
    for doc in ctx.of("converter-stats"):
        hits = [(ev, m) for pattern in (CLOCK, CYCLES, LATENCY) for ev, m in doc.grep(pattern)[:1]]
        broken = [(ev, m) for ev, m in hits if _zero_or_nan(m.group("v"))]
        if not broken:
            continue
        said = ", ".join(quote(ev.text) for ev, _ in broken)
        findings.append(
            Finding(
                30,
                "converter-no-performance-model",
                f"neutron-converter printed {said}: an empty performance estimate, which suggests it had "
                "no performance model for the target and did not really compile the model for this NPU.",
                "Convert again with the Neutron SDK of the board's BSP release and --target imx95, and "
                "check that --dump-statistics then reports a clock frequency and a cycle count.",
                tuple(ev for ev, _ in broken),
            )
        )
    return findings


def _zero_or_nan(value: str) -> bool:
    if "nan" in value.lower():
        return True
    try:
        return float(value.replace(",", "")) == 0.0
    except ValueError:
        return False


def sdk_bsp_mismatch(ctx: Context) -> list[Finding]:
    release = ctx.kernel_release()
    if release is None:
        return []
    kernel, kernel_evidence = release
    findings = []
    for doc in ctx.docs:
        for evidence, _ in doc.grep(pairing.NEUTRON_SDK):
            sdk = pairing.neutron_sdk(evidence.text)
            clause = pairing.neutron_mismatch(sdk, kernel) if sdk else None
            if clause:
                findings.append(
                    Finding(
                        25,
                        "converter-bsp-mismatch",
                        f"The converter and the board do not pair: {clause}.",
                        f"Convert with the Neutron SDK whose name ends in +LF_ of the board's BSP "
                        f"(kernel {pairings.kernel_version(kernel)}), or flash the BSP the SDK belongs to.",
                        tuple(e for e in (evidence, kernel_evidence) if e),
                    )
                )
                return findings
    return findings + _delegate_bsp_mismatch(ctx, kernel, kernel_evidence)


def _delegate_bsp_mismatch(ctx: Context, kernel: str, kernel_evidence: Evidence | None) -> list[Finding]:
    for doc in ctx.of("tflite-log"):
        for evidence, match in doc.grep(DELEGATE_VERSION):
            bsp = pairings.known_delegate_bsp(match.group("version"))
            board = pairings.kernel_version(kernel)
            if bsp and board and board not in bsp:
                return [
                    Finding(
                        26,
                        "delegate-bsp-mismatch",
                        f"The Neutron delegate {match.group('version')} belongs to {bsp} but the board "
                        f"runs kernel {kernel}.",
                        "Install the delegate of the board's BSP release (tensorflow-lite-neutron-delegate "
                        "built from the same meta-imx release as the kernel).",
                        tuple(e for e in (evidence, kernel_evidence) if e),
                    )
                ]
    return []


RULES: tuple[Rule, ...] = (silicon, converter_without_model, sdk_bsp_mismatch)

# SPDX-License-Identifier: MIT
"""The findings npu-diagnose can make, each from the facts of the inputs, most likely cause first.

A finding is one sentence naming the cause, the evidence lines it rests on, and what to do.
Ranks order them: a silicon revision the NPU stack does not support explains everything after it
(the i.MX95 A0 field report), then a runtime that refuses the model, kernel faults, converter
and BSP mismatches, a model the converter did not really compile, delegation, outputs.

The rules of every family are here; a family's own rules are in its package
(`npu_accept.families.<family>.findings`, `RULES`), and `rules()` gathers both.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from npu_accept import compare, families
from npu_accept.diagnose import catalogue, kernel_faults
from npu_accept.diagnose.lines import SEVERE_KERNEL, Line, clean
from npu_accept.diagnose.sources import Document, Evidence, quote
from npu_accept.logparse import parse_label_image
from npu_accept.profile import Profile

# /sys/devices/soc0/revision of the i.MX95: drivers/soc/imx/soc-imx9.c turns the revision byte 0xA0
# (A0) into "1.0" and 0xB0 (B0) into "2.0" (docs/PROVENANCE.md); B0 is the supported silicon.
IMX95_BAD = {"1.0": "A0", "1.1": "A1"}
IMX95_TEXT = re.compile(r"i\.?MX\s?95|imx95", re.IGNORECASE)
KERNEL_RELEASE = re.compile(
    r"(?:Linux version|kernel(?: version| release)?|カーネル\S*)\s*[:：]?\s*(?P<rel>\d+\.\d+\.\d+[-\w.+]*)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Finding:
    rank: int
    code: str
    sentence: str
    action: str
    evidence: tuple[Evidence, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "sentence": self.sentence,
            "action": self.action,
            "evidence": [e.as_dict() for e in self.evidence],
        }


@dataclass
class Context:
    """The inputs and what is known of the board they come from."""

    docs: list[Document]
    profile: Profile | None = None
    notes: list[str] = field(default_factory=list)
    family_hint: str | None = None  # the board's family when no profile or npu-info says it

    @functools.cached_property
    def catalogue(self) -> catalogue.Catalogue:
        """The signatures that apply to the board (every family's when the family is unknown)."""
        return catalogue.load().for_family(self.family)

    @functools.cached_property
    def facts(self) -> dict[str, str]:
        """Versions and names the inputs print (the catalogue's `facts`), first value of each."""
        return self.catalogue.read_facts(line for doc in self.text_docs() for line in doc.records)

    def text_docs(self) -> list[Document]:
        return [d for d in self.docs if d.text and not d.json]

    def of(self, *kinds: str) -> list[Document]:
        return [d for d in self.docs if set(kinds) & set(d.kinds)]

    def npu_info(self) -> dict[str, Any]:
        found = [d.json for d in self.of("npu-info") if d.json]
        return found[0] if found else {}

    @property
    def family(self) -> str | None:
        if self.profile is not None:
            return self.profile.family
        return self.npu_info().get("family") or self.family_hint

    def is_imx95(self) -> bool:
        if self.profile is not None and self.profile.soc.soc_id:
            return self.profile.soc.soc_id == "i.MX95"
        soc = self.npu_info().get("soc") or {}
        soc_id: object = soc.get("soc_id")  # from the report's JSON
        if soc_id:
            return soc_id == "i.MX95"
        return any(IMX95_TEXT.search(d.text) for d in self.docs)

    def bad_revisions(self) -> dict[str, str]:
        if self.profile is not None and self.profile.soc.revisions_bad:
            return dict(self.profile.soc.revisions_bad)
        return IMX95_BAD

    def kernel_release(self) -> tuple[str, Evidence | None] | None:
        info = self.npu_info()
        if info.get("kernel"):
            return str(info["kernel"]), None
        for doc in self.docs:
            for evidence, match in doc.grep(KERNEL_RELEASE):
                return match.group("rel"), evidence
        return None


Rule = Callable[[Context], list[Finding]]


def delegation(ctx: Context) -> list[Finding]:
    findings: list[Finding] = []
    for doc in ctx.of("tflite-log", "tflite-verbose"):
        log = parse_label_image(doc.text)
        npu = [d for d in log.delegations if "xnnpack" not in d.name.lower()]
        xnnpack = [d for d in log.delegations if "xnnpack" in d.name.lower() and d.delegated > 0]
        taken = [d for d in npu if d.delegated > 0]
        evidence = tuple(_line_of(doc, d.text) for d in (npu or xnnpack)[:2])
        if npu and not taken:
            findings.append(
                Finding(
                    40,
                    "nothing-offloaded",
                    f"The NPU delegate loaded but offloaded nothing: {quote(npu[0].text)}.",
                    "Convert the model for this NPU first (the converted model carries the NPU's custom "
                    "op, e.g. NeutronGraph) and run that file through the delegate.",
                    evidence,
                )
            )
        elif xnnpack and not taken:
            findings.append(
                Finding(
                    45,
                    "xnnpack-took-over",
                    "XNNPACK took the graph on the CPU and no NPU delegate took any node: "
                    f"{quote(xnnpack[0].text)}.",
                    "Pass the NPU delegate (--external_delegate_path) with an NPU-converted model and "
                    "disable the default XNNPACK delegate (--use_xnnpack=false) for NPU runs.",
                    evidence,
                )
            )
        findings += _only_dequantize(doc, log)
    return findings


def _only_dequantize(doc: Document, log: Any) -> list[Finding]:
    delegated = [n for n in log.nodes if n.delegated_by is not None]
    if not delegated or any(n.op != "DEQUANTIZE" for n in delegated):
        return []
    lines = [_line_of(doc, f"Node {n.index} Operator") for n in delegated[:2]]
    return [
        Finding(
            41,
            "only-dequantize-offloaded",
            f"The delegate took only {len(delegated)} DEQUANTIZE node(s): the model's real work runs on "
            "the CPU.",
            "Convert the model for this NPU (quantized, with the vendor converter) instead of delegating "
            "a float model.",
            tuple(lines),
        )
    ]


def _line_of(doc: Document, text: str) -> Evidence:
    for number, line in enumerate(doc.lines, start=1):
        if text in line:
            return Evidence(doc.name, number, line)
    return Evidence(doc.name, None, text)


def kernel(ctx: Context) -> list[Finding]:
    allow: tuple[re.Pattern[str], ...] = ()
    if ctx.profile is not None and ctx.profile.kernel_log:
        allow = kernel_faults.compile_allowlist(ctx.profile.kernel_log.get("allow") or [])
    findings = []
    for doc in ctx.text_docs():
        faults = kernel_faults.scan(doc.lines, ctx.family, allow)
        by_pattern: dict[str, list[kernel_faults.KernelFault]] = {}
        for fault in faults:
            by_pattern.setdefault(fault.pattern.name, []).append(fault)
        for name, group in by_pattern.items():
            pattern = group[0].pattern
            more = f" ({len(group)} such lines)" if len(group) > 1 else ""
            findings.append(
                Finding(
                    20,
                    f"kernel-{name}",
                    f"The kernel log shows {pattern.meaning}{more}: "
                    f"{quote(group[0].text, group[0].matched)}.",
                    pattern.action[:1].upper() + pattern.action[1:] + ".",
                    tuple(Evidence(doc.name, f.line_no, f.text, f.matched) for f in group[:3]),
                )
            )
    return findings


def first_hit(ctx: Context, pattern: re.Pattern[str]) -> tuple[Evidence, re.Match[str]] | None:
    for doc in ctx.docs:
        hits = doc.grep(pattern)
        if hits:
            return hits[0]
    return None


def outputs(ctx: Context) -> list[Finding]:
    arrays = ctx.of("npy")
    if not arrays:
        return []
    refs = [d for d in arrays if re.search(r"cpu|ref|golden", d.name, re.IGNORECASE)]
    outs = [d for d in arrays if d not in refs]
    if not refs and len(outs) == 2:
        refs, outs = outs[:1], outs[1:]
    findings = []
    for index, out in enumerate(outs):
        if out.array is None:  # never: a document is of kind "npy" only with its array
            continue
        ref = refs[index] if index < len(refs) else None
        same = None if ref is None or ref.array is None or ref.array.size != out.array.size else ref
        problem = compare.degenerate_reason(
            np.asarray(out.array, dtype=np.float64),
            None if same is None else np.asarray(same.array, dtype=np.float64).reshape(out.array.shape),
        )
        if problem:
            against = "" if same is None else f" (against {same.name})"
            findings.append(
                Finding(
                    50,
                    "degenerate-output",
                    f"The output {out.name} is degenerate{against}: {problem}.",
                    "Fix the causes listed above first; with none, check the model's conversion "
                    "(quantization parameters) and compare the NPU and CPU runs layer by layer.",
                    (Evidence(out.name, None, f"shape {list(out.array.shape)} dtype {out.array.dtype}"),),
                )
            )
    return findings


def signatures(ctx: Context) -> list[Finding]:
    """Every catalogue signature (not the kernel ones: `kernel` groups those) whose lines are there."""
    docs = ctx.text_docs()
    lines = [line for doc in docs for line in doc.records]
    findings = []
    for sig in ctx.catalogue.signatures:
        if sig.rule != "catalogue" or sig.kernel:
            continue
        if any(p.search(line.message) for p in sig.unless for line in lines):
            continue
        needed = [next((m for line in lines if (m := p.search(line.message))), None) for p in sig.needs]
        if not all(needed):
            continue
        for doc in docs:
            hits = _hits(sig, doc.records)
            if not hits:
                continue
            line, match = hits[0]
            groups = [m.groupdict() for m in (*needed, match) if m is not None]
            values = {**ctx.facts, **{k: v for g in groups for k, v in g.items() if v}}
            values["line"] = quote(line.message, match.group(0))
            evidence = tuple(Evidence(doc.name, ln.number, ln.raw, m.group(0)) for ln, m in hits[:2])
            findings.append(
                Finding(
                    sig.rank,
                    sig.id,
                    catalogue.fill(sig.sentence, values),
                    catalogue.fill(sig.action, values),
                    evidence,
                )
            )
            break
    return findings


def _hits(sig: catalogue.Signature, records: list[Line]) -> list[tuple[Line, re.Match[str]]]:
    found = []
    for line in records:
        if line.is_command:
            continue
        for pattern in sig.match:
            match = pattern.search(line.message)
            if match:
                found.append((line, match))
                break
    return found


# The rules of every family; each family package adds its own (`npu_accept.families.<family>.findings`,
# `RULES`): rules() is both.  Each rule decides from the inputs whether it applies, since the family
# of pasted text is often unknown.
RULES: tuple[Rule, ...] = (signatures, delegation, kernel, outputs)


@functools.cache
def rules() -> tuple[Rule, ...]:
    """The rules of every family, then each family package's `RULES`, in the packages' order."""
    from npu_accept import families

    found: tuple[Rule, ...] = RULES
    for _, module in families.modules("findings"):
        found += tuple(module.RULES)
    return found


def diagnose(ctx: Context) -> list[Finding]:
    """Every finding, most likely cause first (a cause before the symptoms it produces)."""
    found = [finding for rule in rules() for finding in rule(ctx)]
    return sorted(found, key=lambda f: f.rank)


# Kernel lines count as errors of the NPU stack only when they name a part of it: a board's boot
# log holds many "failed" lines of other drivers (regulators, PHYs, USB) that say nothing of the NPU.
# Each family's own wording comes from its package (`KERNEL_SUBJECT`, npu_accept.families);
# galcore is the VeriSilicon NPU driver of RKNPU1 and the VX stack.
NPU_SUBJECT = re.compile(
    "|".join(
        (
            *families.kernel_subjects(),
            r"\bnpu\b|\bNPU\b|\btpu\b|\bTPU\b|iommu|IOMMU|smmu|SMMU|remoteproc|rproc|firmware|\bion\b|"
            r"dma[-_]heap|\bcma\b|\baccel\b|galcore",
        )
    )
)


def unexplained(ctx: Context, findings: list[Finding]) -> list[Evidence]:
    """The error-level lines of the inputs that neither a finding nor a known harmless line explains."""
    fired = {f.code for f in findings}
    explains = [p for sig in ctx.catalogue.signatures if sig.id in fired for p in (*sig.explains, *sig.match)]
    cited = {(e.source, e.line_no) for f in findings for e in f.evidence}
    left = []
    for doc in ctx.text_docs():
        for line in doc.records:
            if not line.is_error or (doc.name, line.number) in cited:
                continue
            if line.is_kernel and not (
                NPU_SUBJECT.search(line.message) or SEVERE_KERNEL.search(line.message)
            ):
                continue
            text = clean(line.raw)
            if any(p.search(line.message) or p.search(text) for p in explains):
                continue
            if any(b.match.search(line.message) or b.match.search(text) for b in ctx.catalogue.benign):
                continue
            left.append(Evidence(doc.name, line.number, line.raw))
    return left

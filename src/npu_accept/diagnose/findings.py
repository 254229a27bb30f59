# SPDX-License-Identifier: MIT
"""The findings npu-diagnose can make, each from the facts of the inputs, most likely cause first.

A finding is one sentence naming the cause, the evidence lines it rests on, and what to do.
Ranks order them: a silicon revision the NPU stack does not support explains everything after it
(the i.MX95 A0 field report), then a runtime that refuses the model, kernel faults, converter
and BSP mismatches, a model the converter did not really compile, delegation, outputs.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from npu_accept import compare
from npu_accept.diagnose import catalogue, kernel_faults, pairings
from npu_accept.diagnose.lines import Line, clean
from npu_accept.diagnose.sources import STATED_REVISION, Document, Evidence, quote
from npu_accept.logparse import DELEGATE_VERSION, parse_label_image
from npu_accept.profile import Profile

# /sys/devices/soc0/revision of the i.MX95: drivers/soc/imx/soc-imx9.c turns the revision byte 0xA0
# (A0) into "1.0" and 0xB0 (B0) into "2.0" (docs/PROVENANCE.md); B0 is the supported silicon.
IMX95_REVISIONS = {"1.0": "A0", "1.1": "A1", "2.0": "B0"}
IMX95_BAD = {"1.0": "A0", "1.1": "A1"}
IMX95_TEXT = re.compile(r"i\.?MX\s?95|imx95", re.IGNORECASE)
UBOOT_CPU = re.compile(r"CPU:\s+i\.MX(?P<soc>\w+) rev(?P<rev>\d+\.\d+)")
KERNEL_RELEASE = re.compile(
    r"(?:Linux version|kernel(?: version| release)?|カーネル\S*)\s*[:：]?\s*(?P<rel>\d+\.\d+\.\d+[-\w.+]*)",
    re.IGNORECASE,
)
CLOCK = re.compile(r"Clock Frequency:\s*(?P<v>-?[\d.]+|-?nan)\s*MHz", re.IGNORECASE)
CYCLES = re.compile(r"Clock cycles per inference:\s*(?P<v>-?[\d,.]+|-?nan)", re.IGNORECASE)
LATENCY = re.compile(r"Latency per inference:\s*(?P<v>-?[\d.]+|-?nan)", re.IGNORECASE)
RKNN_RUNTIME = re.compile(r"librknnrt version: (?P<v>\d+(?:\.\d+)+)")
RKNN_SERVER = re.compile(r"(?:rknn_server version: |start rknn server, version:\s*)(?P<v>\d+(?:\.\d+)+)")
RKNN_MODEL_INFO = re.compile(
    r"RKNN Model Information, version: (?P<format>\d+), toolkit version: (?P<v>\d+(?:\.\d+)+)"
)
CVI_CHIPS = ("cv180x", "cv181x", "cv182x", "cv183x")


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
        for evidence, _ in doc.grep(pairings.NEUTRON_SDK):
            sdk = pairings.neutron_sdk(evidence.text)
            clause = pairings.neutron_mismatch(sdk, kernel) if sdk else None
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


def rknn(ctx: Context) -> list[Finding]:
    runtime = _first(ctx, RKNN_RUNTIME)
    return _rknn_pairing(ctx, runtime) + _rknn_server(ctx, runtime)


def _first(ctx: Context, pattern: re.Pattern[str]) -> tuple[Evidence, re.Match[str]] | None:
    for doc in ctx.docs:
        hits = doc.grep(pattern)
        if hits:
            return hits[0]
    return None


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
        info = pairings.rknn_model_info(doc.data)
        if info and info.toolkit_version:
            made.append(
                (info.toolkit_version, Evidence(doc.name, None, f'"version": "{info.toolkit_version}"'))
            )
    model_line = _first(ctx, RKNN_MODEL_INFO)
    if model_line:
        made.append((model_line[1].group("v"), model_line[0]))
    for toolkit, evidence in made:
        clause = pairings.rknn_mismatch(toolkit, board[0])
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
    server = _first(ctx, RKNN_SERVER)
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


RULES: tuple[Rule, ...] = (
    signatures,
    silicon,
    converter_without_model,
    sdk_bsp_mismatch,
    delegation,
    kernel,
    rknn,
    cv18xx,
    outputs,
)


def diagnose(ctx: Context) -> list[Finding]:
    """Every finding, most likely cause first (a cause before the symptoms it produces)."""
    found = [finding for rule in RULES for finding in rule(ctx)]
    return sorted(found, key=lambda f: f.rank)


# Kernel lines count as errors of the NPU stack only when they name a part of it: a board's boot
# log holds many "failed" lines of other drivers (regulators, PHYs, USB) that say nothing of the NPU.
# Kernel events that are faults whatever their subsystem: a board that prints them is not healthy.
SEVERE_KERNEL = re.compile(
    r"BUG:|Oops|Kernel panic|Unable to handle kernel|invoked oom-killer|Out of memory: Kill|soft lockup|"
    r"hard LOCKUP|self-detected stall|Disabling IRQ #\d+|nobody cared"
)
NPU_SUBJECT = re.compile(
    r"rknpu|RKNPU|\bnpu\b|\bNPU\b|neutron|Neutron|rocket|Rocket|cvi[-_]?tpu|\btpu\b|\bTPU\b|iommu|IOMMU|"
    r"smmu|SMMU|remoteproc|rproc|firmware|\bion\b|dma[-_]heap|\bcma\b|\baccel\b|galcore"
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


RULES = (*RULES, rknn_driver_below_minimum)

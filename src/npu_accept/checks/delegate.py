# SPDX-License-Identifier: MIT
"""Check 4 — delegate loading: for every profile model the delegate loads, offloads at least
`min_nodes` nodes, the model really is NPU-converted (its custom op is present), invoke succeeds and
XNNPACK did not take the graph.  npu-run's node counts are cross-checked with the vendor / TFLite
log lines it captured ("NeutronDelegate delegate: N nodes delegated out of M nodes …",
"Replacing N node(s) with delegate …")."""

from __future__ import annotations

from typing import Any

from npu_accept.checks.base import CheckResult, failed, passed, skipped
from npu_accept.facts import BoardFacts, ModelFacts
from npu_accept.logparse import parse_delegations
from npu_accept.profile import Profile

CHECK = "delegate"


def delegated_from_log(lines: list[str]) -> int | None:
    """Nodes the NPU delegate took according to the captured log lines (vendor line preferred over
    TFLite's; XNNPACK's own lines ignored), None when the log is silent."""
    found = [d for d in parse_delegations("\n".join(lines)) if "xnnpack" not in d.name.lower()]
    chosen = [d for d in found if d.source == "vendor"] or found
    return sum(d.delegated for d in chosen) if chosen else None


def check_delegate(facts: BoardFacts, profile: Profile) -> CheckResult:
    spec = profile.delegate
    if spec is None:
        return skipped(CHECK, f"Profile {profile.name} uses no delegate.")
    if facts.info is not None and facts.info_section("delegate").get("present") is False:
        return skipped(
            CHECK,
            f"The delegate library {spec.path} is missing, so nothing could be delegated "
            "(the runtime check names the fix).",
        )
    manifest = (facts.info or {}).get("manifest")
    manifest = manifest if isinstance(manifest, dict) else {}
    summaries: list[str] = []
    for model in facts.models:
        problem = _judge(model, profile, manifest)
        if isinstance(problem, CheckResult):
            return problem
        summaries.append(problem)
    if not summaries:
        return skipped(CHECK, f"Profile {profile.name} lists no model to delegate.")
    return passed(CHECK, "The delegate " + "; ".join(summaries) + ".")


def _judge(model: ModelFacts, profile: Profile, manifest: dict[str, Any]) -> CheckResult | str:
    spec = profile.delegate
    assert spec is not None
    name = model.spec.name
    run = model.npu
    if run is None or run.report is None:
        reason = run.first_error() if run else "it was not run"
        return failed(
            CHECK,
            f"npu-run gave no result for model {name} through the delegate ({reason}); "
            "check the tools and the model path.",
            "npu-run",
        )
    report = run.report
    nodes = report.get("nodes") or {}
    delegated = nodes.get("delegated")
    total = nodes.get("total")
    log_lines = [str(x) for x in ((report.get("log") or {}).get("delegate_lines") or [])]
    if (report.get("delegate") or {}).get("loaded") is False:
        return skipped(
            CHECK,
            f"The delegate {spec.path} did not load for model {name} (the runtime check names the cause).",
        )
    xnnpack = bool(nodes.get("xnnpack_applied"))
    if delegated is not None and delegated < spec.min_nodes and xnnpack and not spec.allow_xnnpack:
        return failed(
            CHECK,
            f"XNNPACK took the graph of model {name}: the NPU delegate offloaded {delegated} "
            f"of {total} nodes (at least {spec.min_nodes} expected); disable the default XNNPACK "
            "delegate for NPU runs and convert the model for this NPU.",
            "xnnpack",
            delegated=delegated,
            total=total,
        )
    if delegated is not None and delegated < spec.min_nodes:
        return failed(
            CHECK,
            f"The delegate offloaded {delegated} of {total} nodes of model {name} "
            f"(at least {spec.min_nodes} expected): the NPU did not take the graph — convert the model "
            "for this NPU and check the delegate's log.",
            "delegate-zero",
            delegated=delegated,
            total=total,
        )
    custom_ops = list((report.get("model") or {}).get("custom_ops") or [])
    if spec.required_custom_op and spec.required_custom_op not in custom_ops:
        return failed(
            CHECK,
            f"Model {name} ({model.spec.path}) is not converted for the NPU: it has no custom "
            f"op {spec.required_custom_op}; convert it with the vendor converter first.",
            "model-not-converted",
            custom_ops=custom_ops,
        )
    built = _built_sha256(manifest, model.spec.path)
    found = (report.get("model") or {}).get("sha256")
    if built and found and built != found:
        return failed(
            CHECK,
            f"Model {name} ({model.spec.path}) is not the one the image was built with (sha256 "
            f"{found[:12]}… on the board, {built[:12]}… in the build manifest); reflash the image or "
            "rebuild it with this model.",
            "model-replaced",
        )
    if not run.ok:
        return failed(
            CHECK,
            f"Invoke of model {name} through the delegate failed: {run.first_error()}.",
            "invoke-failed",
        )
    if delegated is None:
        return failed(
            CHECK,
            f"npu-run reported no delegated node count for model {name}; the tools on the "
            "board are too old for this suite.",
            "npu-run",
        )
    from_log = delegated_from_log(log_lines)
    if from_log is not None and from_log != delegated:
        return failed(
            CHECK,
            f"The delegate log of model {name} says {from_log} nodes were delegated but the "
            f"interpreter's execution plan shows {delegated}; the delegate is not doing what it "
            "reports.",
            "delegate-inconsistent",
        )
    partitions = nodes.get("partitions")
    evidence = " (log agrees)" if from_log is not None else " (no delegate log line)"
    cpu_rest = f", XNNPACK ran {nodes.get('xnnpack_nodes')} remaining CPU node(s)" if xnnpack else ""
    return (
        f"offloaded {delegated} of {total} nodes of {name} in {partitions} partition(s){evidence}{cpu_rest}"
        + (f", custom op {spec.required_custom_op} present" if spec.required_custom_op else "")
    )


def _built_sha256(manifest: dict[str, Any], path: str) -> str | None:
    """The sha256 the build manifest records for a model file, None when it lists no such file."""
    for entry in manifest.get("models") or []:
        if isinstance(entry, dict) and entry.get("path") == path:
            return entry.get("sha256")
    return None


IMPLEMENTS = {(CHECK, "*"): check_delegate}

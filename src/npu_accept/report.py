# SPDX-License-Identifier: MIT
"""Reports of an acceptance session: JUnit properties, LAVA signal lines, the human report
(report.md and report.html through jinja2, with the output comparison table and an inline-SVG
latency plot), a machine summary (summary.json) and the baseline for a later `--baseline`."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import escape

from npu_accept.checks.base import CHECK_ORDER, CHECK_TITLES, FAIL, CheckResult
from npu_accept.checks.performance import model_latencies
from npu_accept.facts import BoardFacts
from npu_accept.profile import Profile

BASELINE_SCHEMA = "npu-accept-baseline/1"


@dataclass
class BoardOutcome:
    """One board's facts, check results and root-cause sentence."""

    target: str
    profile: Profile
    facts: BoardFacts
    results: dict[str, CheckResult]
    root_cause: str | None

    @property
    def all_passed(self) -> bool:
        return all(r.status == "pass" for r in self.results.values())

    @property
    def accepted(self) -> bool:
        return not any(r.status == FAIL for r in self.results.values())


def board_properties(outcome: BoardOutcome) -> dict[str, str]:
    """JUnit properties of a board: profile, target, SoC revision, driver/runtime versions, manifest."""
    info = outcome.facts.info or {}
    soc = info.get("soc") or {}
    driver = info.get("driver") or {}
    runtime = info.get("runtime") or {}
    delegate = info.get("delegate") or {}
    manifest = info.get("manifest")
    return {
        "board": outcome.profile.name,
        "target": outcome.target,
        "soc": str(soc.get("soc_id")),
        "soc_revision": str(soc.get("revision")),
        "kernel": str(info.get("kernel")),
        "driver": f"{driver.get('name')} {driver.get('version')}",
        "runtime": f"{runtime.get('name')} {runtime.get('version')}" if runtime else "-",
        "delegate": str(delegate.get("path")) if delegate else "-",
        "tool_version": str(info.get("tool_version")),
        "manifest": json.dumps(manifest, sort_keys=True, separators=(",", ":")) if manifest else "None",
    }


def lava_line(check: str, target: str, fleet: bool, status: str) -> str:
    """`<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=… RESULT=pass|fail|skip>`; fleet ids carry the target."""
    case = check if not fleet else f"{check}-{re.sub(r'[^A-Za-z0-9._-]+', '_', target)}"
    return f"<LAVA_SIGNAL_TESTCASE TEST_CASE_ID={case} RESULT={status}>"


def baseline_entry(baseline: dict[str, Any] | None, target: str, profile: str) -> dict[str, Any] | None:
    """This board's baseline: recorded for the same target, else the only one recorded for the profile."""
    if not baseline:
        return None
    boards = baseline.get("boards") or {}
    if target in boards:
        return boards[target]
    same_profile = [b for b in boards.values() if b.get("profile") == profile]
    return same_profile[0] if len(same_profile) == 1 else None


def baseline_of(outcome: BoardOutcome) -> dict[str, Any]:
    models = {}
    for model in outcome.facts.models:
        npu, cpu = model_latencies(model)
        if npu is not None:
            models[model.spec.name] = {
                "p50_ms": round(npu.p50, 4),
                "p99_ms": round(npu.p99, 4),
                "min_ms": round(npu.min, 4),
                "runs": npu.runs,
                "cpu_p50_ms": round(cpu.p50, 4) if cpu else None,
            }
    return {"profile": outcome.profile.name, "models": models}


def write_baseline(outcomes: list[BoardOutcome], path: Path) -> None:
    """The latencies of this run, for `--baseline` of a later one (boards without timings omitted)."""
    boards = {o.target: baseline_of(o) for o in outcomes if not o.facts.collect_error}
    boards = {t: b for t, b in boards.items() if b["models"]}
    if boards:
        path.write_text(json.dumps({"schema": BASELINE_SCHEMA, "boards": boards}, indent=2) + "\n")


def latency_svg(outcome: BoardOutcome, width: int = 640, height: int = 220) -> str:
    """An inline SVG: per-run latency of every model on the NPU and on the CPU, log-free linear axes."""
    series: list[tuple[str, list[float], str]] = []
    palette = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"]
    for model in outcome.facts.models:
        for label, run in (("NPU", model.npu), ("CPU", model.cpu)):
            if run is not None and run.ok and run.latencies_ms:
                series.append((f"{model.spec.name} {label}", run.latencies_ms, palette[len(series) % 6]))
    if not series:
        return "<p>No latency was measured.</p>"
    left, right, top, bottom = 60, 160, 20, 30
    top_value = max(max(values) for _, values, _ in series) * 1.1 or 1.0
    longest = max(len(values) for _, values, _ in series)
    plot_w, plot_h = width - left - right, height - top - bottom
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="latency per run">',
        f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#888"/>',
        f'<text x="{left - 5}" y="{top + 10}" font-size="10" text-anchor="end">{top_value:.2f} ms</text>',
        f'<text x="{left - 5}" y="{top + plot_h}" font-size="10" text-anchor="end">0 ms</text>',
        f'<text x="{left + plot_w / 2}" y="{height - 8}" font-size="10" text-anchor="middle">'
        f"run (after warm-up)</text>",
    ]
    for index, (label, values, colour) in enumerate(series):
        step = plot_w / max(longest - 1, 1)
        points = " ".join(
            f"{left + i * step:.1f},{top + plot_h - v / top_value * plot_h:.1f}" for i, v in enumerate(values)
        )
        parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="1.5" points="{points}"/>')
        y = top + 12 + index * 14
        parts.append(
            f'<line x1="{left + plot_w + 10}" y1="{y - 4}" x2="{left + plot_w + 24}" y2="{y - 4}" '
            f'stroke="{colour}" stroke-width="2"/>'
        )
        parts.append(f'<text x="{left + plot_w + 28}" y="{y}" font-size="10">{escape(label)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _context(outcomes: list[BoardOutcome]) -> dict[str, Any]:
    boards = []
    for outcome in outcomes:
        latencies = []
        stat = outcome.profile.performance.statistic
        for model in outcome.facts.models:
            npu, cpu = model_latencies(model)
            speedup = cpu.stat(stat) / npu.stat(stat) if npu and cpu and npu.stat(stat) > 0 else None
            latencies.append({"model": model.spec.name, "npu": npu, "cpu": cpu, "speedup": speedup})
        outputs = outcome.results.get("outputs")
        boards.append(
            {
                "target": outcome.target,
                "profile": outcome.profile.name,
                "accepted": outcome.accepted,
                "root_cause": outcome.root_cause,
                "properties": board_properties(outcome),
                "checks": [
                    {
                        "title": CHECK_TITLES[c],
                        "status": outcome.results[c].status,
                        "message": outcome.results[c].message,
                    }
                    for c in CHECK_ORDER
                    if c in outcome.results
                ],
                "comparisons": (outputs.details.get("comparisons") or []) if outputs else [],
                "latencies": latencies,
                "svg": latency_svg(outcome),
                "seconds": outcome.facts.collect_seconds,
                "timings": ", ".join(
                    f"{phase} {seconds:.2f} s" for phase, seconds in outcome.facts.timings.items()
                ),
            }
        )
        boards[-1]["statistic"] = outcome.profile.performance.statistic
    return {"boards": boards, "accepted": all(b["accepted"] for b in boards)}


def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("npu_accept", "templates"),
        autoescape=jinja2.select_autoescape(enabled_extensions=("html", "html.j2"), default_for_string=False),
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )


def render_markdown(outcomes: list[BoardOutcome]) -> str:
    return _environment().get_template("report.md.j2").render(_context(outcomes))


def render_html(outcomes: list[BoardOutcome]) -> str:
    return _environment().get_template("report.html.j2").render(_context(outcomes))


def write_reports(outcomes: list[BoardOutcome], directory: Path) -> list[Path]:
    """report.md, report.html and summary.json under `directory`."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in (("report.md", render_markdown(outcomes)), ("report.html", render_html(outcomes))):
        path = directory / name
        path.write_text(text, encoding="utf-8")
        written.append(path)
    summary = {
        o.target: {
            "profile": o.profile.name,
            "accepted": o.accepted,
            "root_cause": o.root_cause,
            "checks": {c: {"status": r.status, "message": r.message} for c, r in o.results.items()},
        }
        for o in outcomes
    }
    path = directory / "summary.json"
    path.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    written.append(path)
    return written

# SPDX-License-Identifier: MIT
"""Reports of an acceptance session: JUnit properties, LAVA signal lines, the human report
(report.md and report.html through jinja2, with the output comparison table and an inline-SVG
latency plot), a machine summary (summary.json) and the baseline for a later `--baseline`."""

from __future__ import annotations

import contextlib
import errno
import json
import math
import os
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import escape

from npu_accept.checks.base import CHECK_ORDER, CHECK_TITLES, FAIL, CheckResult
from npu_accept.checks.performance import latency, model_latencies
from npu_accept.collect import board_dir_name
from npu_accept.facts import BoardFacts
from npu_accept.profile import Profile
from npu_accept.trace import FILE_NAME as TRACE_FILE
from npu_accept.transport import visible

BASELINE_SCHEMA = "npu-accept-baseline/1"


@dataclass
class BoardOutcome:
    """One board's facts, check results and root-cause sentence."""

    target: str
    profile: Profile
    facts: BoardFacts
    results: dict[str, CheckResult]
    root_cause: str | None
    place: dict[str, Any] | None = None  # the labgrid place (name, tags) the board came from
    seconds: dict[str, float] = field(default_factory=dict)  # each selected check's own time (JUnit)

    @property
    def all_passed(self) -> bool:
        return all(r.status == "pass" for r in self.results.values())

    @property
    def accepted(self) -> bool:
        """No check failed and every check was judged: a run of some checks (-k) accepts no board."""
        return not any(r.status == FAIL or r.details.get("selected") is False for r in self.results.values())


_PROPERTY_CHARS = 300
_MESSAGE_CHARS = 800
_MANIFEST_CHARS = 8192


def _section(value: Any, key: str) -> dict[str, Any]:
    found = value.get(key) if isinstance(value, dict) else None
    return found if isinstance(found, dict) else {}


def board_properties(outcome: BoardOutcome) -> dict[str, str]:
    """JUnit properties of a board: profile, target, SoC revision, driver/runtime versions, manifest.

    Board strings are shown through `visible` (escape sequences made visible, a few hundred
    characters at most), whatever the board's facts hold."""
    info = outcome.facts.info if isinstance(outcome.facts.info, dict) else {}
    soc, driver = _section(info, "soc"), _section(info, "driver")
    runtime, delegate = _section(info, "runtime"), _section(info, "delegate")
    manifest = info.get("manifest")
    manifest_text = "None"
    if manifest:
        manifest_text = json.dumps(manifest, sort_keys=True, separators=(",", ":"), default=str)
        if len(manifest_text) > _MANIFEST_CHARS:
            manifest_text = f"(a build manifest of {len(manifest_text)} characters: see npu-info.json)"
    properties = {
        "board": outcome.profile.name,
        "target": outcome.target,
        "soc": str(soc.get("soc_id")),
        "soc_revision": str(soc.get("revision")),
        "kernel": str(info.get("kernel")),
        "driver": f"{driver.get('name')} {driver.get('version')}",
        "runtime": f"{runtime.get('name')} {runtime.get('version')}" if runtime else "-",
        "delegate": str(delegate.get("path")) if delegate else "-",
        "tool_version": str(info.get("tool_version")),
    }
    if outcome.place:
        properties["place"] = place_text(outcome.place)
    shown = {key: visible(value, _PROPERTY_CHARS) for key, value in properties.items()}
    return {**shown, "manifest": visible(manifest_text, _MANIFEST_CHARS + 100)}


def place_text(place: dict[str, Any]) -> str:
    """`NAME (tag=value, …)`: a labgrid place as the reports show it beside the address."""
    tags = ", ".join(f"{k}={v}" for k, v in sorted((place.get("tags") or {}).items()))
    return f"{place.get('name')} ({tags})" if tags else str(place.get("name"))


def shown_message(text: str | None) -> str:
    """A check's or a root cause's sentence as the terminal, JUnit and the reports show it."""
    return visible(text or "", _MESSAGE_CHARS)


_MARKDOWN = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", "|": "\\|", "[": "\\["})


def markdown_text(text: object) -> str:
    """Text for a report.md table cell or line: no raw HTML, no table breaks, no live link or
    remote image: `[` is escaped, and without it `](…)`, `![` and reference definitions are
    plain text (a board's `[click](http://…)` and `![](http://…)` stay text)."""
    return str(text).translate(_MARKDOWN)


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
        entry: dict[str, Any] = boards[target]
        return entry
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
    """The latencies of this run, for `--baseline` of a later one (boards without timings omitted);
    with no timings at all, an earlier run's baseline.json there is removed, not left as this one."""
    boards = {o.target: baseline_of(o) for o in outcomes if not o.facts.collect_error}
    boards = {t: b for t, b in boards.items() if b["models"]}
    if boards:
        atomic_write(path, json.dumps({"schema": BASELINE_SCHEMA, "boards": boards}, indent=2) + "\n")
    else:
        path.unlink(missing_ok=True)


class ReportsNotWritten(Exception):
    """Some reports could not be written; the message is one sentence naming the directory, what
    was not written and why, and what was."""


def atomic_write(path: Path, text: str) -> None:
    """`text` at `path` whole or not at all: written to a temp file beside it, then renamed over
    it. Lone surrogates (valid JSON, no UTF-8) and anything else unencodable become backslash
    escapes. On failure the temp file is removed and the error raised."""
    data = text.encode("utf-8", "backslashreplace")
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as stream:
            stream.write(data)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


@dataclass(frozen=True)
class _Series:
    label: str
    values: list[float]
    colour: str


_PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b")
_PLOT_MARGINS = (62, 230, 16, 44)  # left, right (legend), top, bottom (axis title)


def latency_svg(outcome: BoardOutcome, width: int = 760, height: int = 260) -> str:
    """An inline SVG: the latency of every measured run (x: run number after warm-up, y: ms) of
    every model on the NPU and on the CPU, each with its p50 (dashed) and p99 (dotted) line."""
    series = [
        _Series(f"{model.spec.name} {label}", run.latencies_ms, _PALETTE[index % len(_PALETTE)])
        for index, (model, label, run) in enumerate(
            (m, label, r)
            for m in outcome.facts.models
            for label, r in (("NPU", m.npu), ("CPU", m.cpu))
            if r is not None and r.ok and r.latencies_ms
        )
    ]
    if not series:
        return "<p>No latency was measured.</p>"
    left, right, top, bottom = _PLOT_MARGINS
    plot_w, plot_h = width - left - right, height - top - bottom
    y_ticks = _nice_ticks(max(max(s.values) for s in series))
    runs = max(len(s.values) for s in series)

    def x(run: int) -> float:  # run numbers start at 1
        return left + (run - 1) * plot_w / max(runs - 1, 1)

    def y(ms: float) -> float:
        return top + plot_h - ms / y_ticks[-1] * plot_h

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="latency of each run, in ms" '
        'font-family="sans-serif" font-size="10">',
        *_axes(left, top, plot_w, plot_h, y_ticks, y, [(r, x(r)) for r in _run_ticks(runs)]),
    ]
    for index, line in enumerate(series):
        stats = latency(line.values)
        assert stats is not None  # every series holds values (built above)
        points = " ".join(f"{x(i + 1):.1f},{y(v):.1f}" for i, v in enumerate(line.values))
        parts.append(f'<polyline fill="none" stroke="{line.colour}" stroke-width="1.5" points="{points}"/>')
        for value, dash in ((stats.p50, "6 3"), (stats.p99, "2 2")):
            parts.append(
                f'<line x1="{left}" x2="{left + plot_w}" y1="{y(value):.1f}" y2="{y(value):.1f}" '
                f'stroke="{line.colour}" stroke-dasharray="{dash}" stroke-width="1"/>'
            )
        legend_y = top + 10 + index * 28
        parts.append(
            f'<line x1="{left + plot_w + 12}" y1="{legend_y - 4}" x2="{left + plot_w + 28}" '
            f'y2="{legend_y - 4}" stroke="{line.colour}" stroke-width="2"/>'
            f'<text x="{left + plot_w + 32}" y="{legend_y}">{escape(line.label)}</text>'
            f'<text x="{left + plot_w + 32}" y="{legend_y + 12}" fill="#555">'
            f"p50 {stats.p50:.3f} ms (dashed), p99 {stats.p99:.3f} ms (dotted)</text>"
        )
    parts.append("</svg>")
    return "".join(parts)


def _axes(
    left: int,
    top: int,
    plot_w: int,
    plot_h: int,
    y_ticks: list[float],
    y: Callable[[float], float],
    x_ticks: list[tuple[int, float]],
) -> list[str]:
    """Frame, grid, tick labels and the two axis titles."""
    bottom = top + plot_h
    parts = [f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#888"/>']
    for value in y_ticks:
        parts.append(
            f'<line x1="{left}" x2="{left + plot_w}" y1="{y(value):.1f}" y2="{y(value):.1f}" stroke="#eee"/>'
            f'<text x="{left - 5}" y="{y(value) + 3:.1f}" text-anchor="end">{value:g}</text>'
        )
    for run, position in x_ticks:
        parts.append(
            f'<line x1="{position:.1f}" x2="{position:.1f}" y1="{bottom}" y2="{bottom + 4}" stroke="#888"/>'
            f'<text x="{position:.1f}" y="{bottom + 15}" text-anchor="middle">{run}</text>'
        )
    parts.append(
        f'<text x="{left + plot_w / 2:.1f}" y="{bottom + 34}" text-anchor="middle">'
        "run number (after warm-up)</text>"
        f'<text x="14" y="{top + plot_h / 2:.1f}" text-anchor="middle" '
        f'transform="rotate(-90 14 {top + plot_h / 2:.1f})">latency (ms)</text>'
    )
    return parts


def _nice_ticks(maximum: float) -> list[float]:
    """0, a round step, …, the first multiple of that step at or above maximum (4 to 8 ticks)."""
    if maximum <= 0:
        return [0.0, 1.0]
    magnitude = 10 ** math.floor(math.log10(maximum / 4))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if maximum / (m * magnitude) <= 7)
    count = math.ceil(maximum / step - 1e-9)
    return [round(i * step, 10) for i in range(count + 1)]


def _run_ticks(runs: int) -> list[int]:
    """Run numbers to label on the x axis: 1, then every k-th run, at most about 10 labels."""
    stride = max(1, math.ceil(runs / 10))
    if stride > 1:
        stride = next(s for s in (2, 5, 10, 20, 25, 50, 100, 200, 500, 1000, stride) if s >= stride)
    return sorted({1, *range(stride, runs + 1, stride)})


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
                "place": visible(place_text(outcome.place), _PROPERTY_CHARS) if outcome.place else None,
                "profile": outcome.profile.name,
                "accepted": outcome.accepted,
                "root_cause": shown_message(outcome.root_cause) if outcome.root_cause else None,
                "properties": board_properties(outcome),
                "checks": [
                    {
                        "title": CHECK_TITLES[c],
                        "status": outcome.results[c].status,
                        "message": shown_message(outcome.results[c].message),
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
                "trace": f"{board_dir_name(outcome.target)}/{TRACE_FILE}",
            }
        )
        boards[-1]["statistic"] = outcome.profile.performance.statistic
    return {"boards": boards, "accepted": all(b["accepted"] for b in boards)}


def _environment() -> jinja2.Environment:
    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("npu_accept", "templates"),
        autoescape=jinja2.select_autoescape(enabled_extensions=("html", "html.j2"), default_for_string=False),
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )
    environment.filters["md"] = markdown_text
    return environment


def render_markdown(outcomes: list[BoardOutcome], context: dict[str, Any] | None = None) -> str:
    return _environment().get_template("report.md.j2").render(context or _context(outcomes))


def render_html(outcomes: list[BoardOutcome], context: dict[str, Any] | None = None) -> str:
    return _environment().get_template("report.html.j2").render(context or _context(outcomes))


def write_reports(outcomes: list[BoardOutcome], directory: Path, *, baseline: bool = False) -> list[Path]:
    """report.md, report.html and summary.json under `directory` (and baseline.json when asked),
    each written atomically and on its own: one that cannot be rendered or written costs no
    other. ReportsNotWritten (one sentence) after all were tried, if any failed; a failed one's
    copy from an earlier run is removed, so no earlier fleet's report passes for this one's."""
    directory.mkdir(parents=True, exist_ok=True)
    context: dict[str, Any] = {}

    def shared() -> dict[str, Any]:  # built once for both renderings
        if not context:
            context.update(_context(outcomes))
        return context

    jobs: list[tuple[str, Callable[[], str | None]]] = [
        ("report.md", lambda: render_markdown(outcomes, shared())),
        ("report.html", lambda: render_html(outcomes, shared())),
        ("summary.json", lambda: json.dumps(_summary(outcomes), indent=2) + "\n"),
    ]
    if baseline:
        jobs.append(("baseline.json", lambda: write_baseline(outcomes, directory / "baseline.json")))
    written: list[Path] = []
    failed: list[tuple[str, BaseException]] = []
    for name, make in jobs:
        path = directory / name
        try:
            text = make()
            if text is not None:
                atomic_write(path, text)
            if path.exists():
                written.append(path)
        except Exception as exc:  # noqa: BLE001 - one report's trouble never costs another
            failed.append((name, exc))
            with contextlib.suppress(OSError):
                path.unlink(missing_ok=True)
    if failed:
        raise ReportsNotWritten(_not_written(directory, written, failed))
    return written


def _summary(outcomes: list[BoardOutcome]) -> dict[str, Any]:
    return {
        o.target: {
            **({"place": o.place} if o.place else {}),
            "profile": o.profile.name,
            "accepted": o.accepted,
            "root_cause": shown_message(o.root_cause) if o.root_cause else None,
            "checks": {
                c: {"status": r.status, "message": shown_message(r.message)} for c, r in o.results.items()
            },
        }
        for o in outcomes
    }


def _not_written(directory: Path, written: list[Path], failed: list[tuple[str, BaseException]]) -> str:
    full = any(getattr(e, "errno", None) in (errno.ENOSPC, errno.EDQUOT) for _, e in failed)
    why = ", ".join(
        f"{name} ({type(exc).__name__}: {visible(getattr(exc, 'strerror', None) or exc, 200)})"
        for name, exc in failed
    )
    kept = ", ".join(p.name for p in written) or "nothing"
    fix = (
        "the disk is full (No space left on device): free space there or give --artifacts another disk"
        if full
        else "check that directory"
    )
    return (
        f"the reports could not be written to {directory} in full: not written {why}; written: {kept}; {fix}"
    )

# SPDX-License-Identifier: MIT
"""Reports: JUnit properties, LAVA lines, report.md/report.html with the comparison table and the
latency plot, summary.json and baseline.json — rendered from facts and from a real suite run."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from twins.boards_run import run_on_twin

from npu_accept.checks import root_cause, run_all
from npu_accept.facts import BoardFacts, ModelFacts, RunFacts
from npu_accept.paths import packaged_profiles_dir
from npu_accept.profile import load_profile
from npu_accept.report import (
    BoardOutcome,
    baseline_entry,
    board_properties,
    latency_svg,
    lava_line,
    render_html,
    render_markdown,
    write_baseline,
    write_reports,
)
from npu_accept.sim.imx95 import A0_FIELD_REPORT, imx95_assets, imx95_spec, imx95_twin_profile

PROFILES = packaged_profiles_dir()


def _outcome(message_hint: str = "") -> BoardOutcome:
    profile = load_profile("imx95-verdin", PROFILES)
    reference = np.linspace(-1, 1, 1001, dtype=np.float32)[None]

    def run(backend: str, latency: float, out: np.ndarray) -> RunFacts:
        report = {
            "backend": backend,
            "model": {"custom_ops": ["NeutronGraph"]},
            "delegate": {"loaded": True},
            "nodes": {"total": 4, "delegated": 1, "partitions": 1, "xnnpack_applied": False},
            "outputs": [{"file": "out0.npy", "scale": 0.0, "zero_point": 0}],
            "latency_ms": [latency + 0.01 * i for i in range(10)],
            "log": {"delegate_lines": []},
            "errors": [],
        }
        return RunFacts(backend, "/m.tflite", 0, report, [out])

    info = {
        "soc": {"soc_id": "i.MX95", "revision": "1.0"},
        "kernel": "6.12.49-lts-next",
        "tool_version": "1.0.0",
        "driver": {
            "name": "neutron",
            "version": "1.0",
            "module_loaded": True,
            "devices": ["/dev/neutron0"],
            "firmware": {"present": True, "state": "running"},
        },
        "delegate": {"path": "/usr/lib/libneutron_delegate.so", "present": True},
        "memory": {"pools": [{"name": "neutron-pool", "size": 1 << 27}]},
        "manifest": {"npu_family": "neutron", "driver": {"version": "1.0"}, "note": message_hint},
    }
    facts = BoardFacts(
        target="root@10.0.0.7:22",
        info=info,
        models=[
            ModelFacts(
                spec=profile.models[0],
                npu=run("tflite-delegate", 0.4, np.full_like(reference, 0.227)),
                cpu=run("tflite-cpu", 3.0, reference),
            )
        ],
    )
    results = run_all(facts, profile)
    return BoardOutcome("root@10.0.0.7:22", profile, facts, results, root_cause(results))


def test_markdown_has_verdict_root_cause_table_and_plot():
    outcome = _outcome()
    text = render_markdown([outcome])
    assert "## root@10.0.0.7:22 — profile `imx95-verdin`: NOT ACCEPTED" in text
    assert f"**Root cause:** {outcome.root_cause}" in text
    assert "| mobilenet_v1_quant | out0 | CPU |" in text
    assert "| 2. Silicon revision | fail |" in text
    assert "<svg" in text and "mobilenet_v1_quant NPU" in text and "mobilenet_v1_quant CPU" in text


def test_html_escapes_board_strings():
    outcome = _outcome()
    outcome.facts.info["kernel"] = "<script>alert(1)</script>"
    html = render_html([outcome])
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;" in html
    assert "<svg" in html and 'class="fail"' in html


def test_latency_svg_plots_every_run():
    svg = latency_svg(_outcome())
    assert svg.startswith("<svg") and svg.count("<polyline") == 2
    points = svg.split('points="')[1].split('"')[0].split()
    assert len(points) == 10


def test_latency_svg_has_labelled_axes_run_numbers_and_percentile_lines():
    outcome = _outcome()
    svg = latency_svg(outcome)
    assert ">run number (after warm-up)</text>" in svg and ">latency (ms)</text>" in svg
    runs = len(outcome.facts.models[0].npu.latencies_ms)
    for run in (1, runs):
        assert f'text-anchor="middle">{run}</text>' in svg
    # one dashed p50 and one dotted p99 line per series, and their values in the legend
    assert svg.count('stroke-dasharray="6 3"') == 2 and svg.count('stroke-dasharray="2 2"') == 2
    npu = sorted(outcome.facts.models[0].npu.latencies_ms)
    assert f"p50 {np.percentile(npu, 50):.3f} ms (dashed)" in svg
    assert f"p99 {np.percentile(npu, 99):.3f} ms (dotted)" in svg


def test_properties_name_board_revision_driver_and_manifest():
    props = board_properties(_outcome("x"))
    assert props["board"] == "imx95-verdin" and props["target"] == "root@10.0.0.7:22"
    assert props["soc_revision"] == "1.0" and props["driver"] == "neutron 1.0"
    assert json.loads(props["manifest"])["note"] == "x"


def test_lava_lines():
    assert (
        lava_line("driver", "root@b:22", False, "pass")
        == "<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=driver RESULT=pass>"
    )
    assert lava_line("outputs", "root@b:22", True, "fail") == (
        "<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=outputs-root_b_22 RESULT=fail>"
    )


def test_baseline_round_trip(tmp_path):
    outcome = _outcome()
    write_baseline([outcome], tmp_path / "baseline.json")
    data = json.loads((tmp_path / "baseline.json").read_text())
    assert data["schema"] == "npu-accept-baseline/1"
    entry = baseline_entry(data, "root@10.0.0.7:22", "imx95-verdin")
    assert entry is not None and entry["models"]["mobilenet_v1_quant"]["p50_ms"] == pytest.approx(0.445)
    # another address of the same (only) board of that profile still finds it
    assert baseline_entry(data, "root@10.0.0.8:22", "imx95-verdin") == entry
    assert baseline_entry(data, "root@10.0.0.8:22", "rk3588-evb") is None


def test_write_reports(tmp_path):
    written = write_reports([_outcome()], tmp_path)
    assert sorted(p.name for p in written) == ["report.html", "report.md", "summary.json"]
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["root@10.0.0.7:22"]["accepted"] is False


@pytest.fixture(scope="module")
def seed_run(twin_factory, tmp_path_factory):
    work = tmp_path_factory.mktemp("reports")
    twin = twin_factory(imx95_spec(A0_FIELD_REPORT, imx95_assets(work / "assets")))
    profile = imx95_twin_profile(work / "profile", runs=5)
    run = run_on_twin(twin, profile, work / "run", ["--lava-signals", "-o", "junit_family=xunit1"])
    return twin, run, work / "run" / "junit.xml"


def test_junit_properties_of_a_real_run(seed_run):
    twin, run, junit = seed_run
    assert run.returncode == 1, run.describe()
    suite = ET.parse(junit).getroot().find("testsuite")
    props = {p.get("name"): p.get("value") for p in suite.find("properties")}
    assert props["board"] == "imx95-verdin-twin" and props["target"] == twin.target
    assert props["soc_revision"] == "1.0" and props["driver"] == "neutron 1.0"
    assert json.loads(props["manifest"])["machine"] == "imx95-19x19-verdin"
    case = next(c for c in suite.iter("testcase") if c.get("name").startswith("test_silicon"))
    case_props = {p.get("name"): p.get("value") for p in case.find("properties")}
    assert case_props["result"] == "fail" and case_props["check"] == "2. Silicon revision"
    assert "A0 (revision 1.0)" in case.find("failure").get("message")


def test_artifacts_and_lava_of_a_real_run(seed_run):
    twin, run, _ = seed_run
    assert "<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=silicon RESULT=fail>" in run.stdout
    assert "<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=driver RESULT=pass>" in run.stdout
    board = run.artifacts / twin.target.replace("@", "_").replace(":", "_")
    assert json.loads((board / "npu-info.json").read_text())["soc"]["revision"] == "1.0"
    npu_out = np.load(board / "face_detection" / "npu" / "out0.npy")
    cpu_out = np.load(board / "face_detection" / "cpu" / "out0.npy")
    assert npu_out.shape == cpu_out.shape == (1, 896, 16)
    assert (
        "NPU outputs are degenerate and the SoC is i.MX95 A0" in (run.artifacts / "report.html").read_text()
    )


def test_properties_and_reports_survive_any_board_facts(tmp_path):
    outcome = _outcome()
    outcome.facts.info.update(
        soc=["i.MX95"],
        driver="loaded",
        runtime=7,
        delegate=None,
        kernel="\x1b[2J6.12",
        manifest={"x": "y" * 20000},
    )
    props = board_properties(outcome)
    assert props["soc"] == "None" and props["driver"] == "None None" and props["runtime"] == "-"
    assert props["kernel"] == "\\e[2J6.12" and props["manifest"].startswith("(a build manifest of ")
    outcome.facts.info = ["not", "a", "dict"]  # type: ignore[assignment]
    assert board_properties(outcome)["soc"] == "None"
    written = write_reports([outcome], tmp_path)
    assert len(written) == 3 and "\x1b" not in (tmp_path / "report.md").read_text()


def test_markdown_report_has_no_raw_html_from_a_board():
    outcome = _outcome()
    outcome.facts.info["soc"]["soc_id"] = "<img src=x onerror=alert(1)>|"
    text = render_markdown([outcome])
    assert "<img" not in text and "&lt;img src=x onerror=alert(1)&gt;\\|" in text


# ------------------------------------------- issue 28: reports always written, each on its own


def test_a_lone_surrogate_from_a_board_costs_no_report(tmp_path):
    # Why: npu-info JSON carrying "\ud800" (valid JSON) left report.md at 0 bytes and report.html,
    # summary.json and baseline.json missing for the whole fleet (UnicodeEncodeError).
    outcome = _outcome()
    outcome.facts.info["kernel"] = json.loads('"6.12\\ud800"')
    written = write_reports([outcome], tmp_path, baseline=True)
    assert sorted(p.name for p in written) == ["baseline.json", "report.html", "report.md", "summary.json"]
    assert "6.12\\ud800" in (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "6.12\\ud800" in (tmp_path / "report.html").read_text(encoding="utf-8")


def test_one_failing_writer_costs_no_other_report(tmp_path, monkeypatch):
    from npu_accept import report

    (tmp_path / "report.html").write_text("an earlier run's report")
    monkeypatch.setattr(report, "render_html", lambda *a: (_ for _ in ()).throw(ValueError("broken")))
    with pytest.raises(report.ReportsNotWritten) as info:
        write_reports([_outcome()], tmp_path, baseline=True)
    message = str(info.value)
    assert message.startswith(
        f"the reports could not be written to {tmp_path} in full: not written report.html"
    )
    assert "written: report.md, summary.json, baseline.json" in message and "\n" not in message
    assert (tmp_path / "report.md").stat().st_size > 0 and (tmp_path / "summary.json").is_file()
    assert not (tmp_path / "report.html").exists()  # the earlier run's copy is not left as this run's
    assert not list(tmp_path.glob(".*.tmp"))


def test_an_earlier_runs_baseline_is_not_left_as_this_runs(tmp_path):
    # Why: with an earlier run's files in the directory, baseline.json silently stayed the earlier fleet's.
    (tmp_path / "baseline.json").write_text('{"schema": "npu-accept-baseline/1", "boards": {"old": {}}}')
    outcome = _outcome()
    outcome.facts.collect_error = "Board could not be examined: gone."
    write_baseline([outcome], tmp_path / "baseline.json")
    assert not (tmp_path / "baseline.json").exists()


def test_board_markdown_stays_text():
    # Why: report.md kept board-supplied Markdown live ([click](http://…), ![](http://…) images).
    outcome = _outcome()
    outcome.facts.info["soc"]["soc_id"] = "[click](http://evil.invalid/) ![](http://evil.invalid/x.png)"
    text = render_markdown([outcome])
    assert not re.search(r"(?<!\\)\[", text.split("| soc |")[1].split("\n")[0])  # no live "["
    assert "\\[click](http://evil.invalid/) !\\[](http://evil.invalid/x.png)" in text


def test_a_full_disk_is_one_sentence_naming_what_was_written(tiny_disk):
    from npu_accept import report

    (tiny_disk / "filler").write_bytes(b"x" * (60 << 10))
    with pytest.raises(report.ReportsNotWritten) as info:
        write_reports([_outcome()], tiny_disk, baseline=True)
    message = str(info.value)
    assert "No space left on device" in message and str(tiny_disk) in message, message
    assert "the disk is full" in message and "\n" not in message
    assert not list(tiny_disk.glob(".*.tmp"))
    for name in ("report.md", "report.html", "summary.json"):  # whole or absent, never 0 bytes
        path = tiny_disk / name
        assert not path.exists() or path.stat().st_size > 0

# SPDX-License-Identifier: MIT
"""Version knowledge as data (src/npu_accept/families/<family>/versions.yaml): every row names its
upstream file and commit (or the public thread), unconfirmed rows are never asserted, the rows
that used to be Python are all still there, docs/PROVENANCE.md shows exactly the files, and the one
finding made from them fires on real logs and stays silent on their twins.

Fixture logs (machine lines as posted): rknn-driver-below-documented-minimum.fires.log from
https://github.com/Pelochus/ezrknpu/issues/11 (rkllm-runtime 1.1.2 on RKNPU driver 0.9.7), its
near miss from https://github.com/airockchip/rknn-llm/issues/129 (the same runtime on 0.9.8). The
oracle of the minimum is the RKLLM SDK guide of each rknn-llm release (docs/PROVENANCE.md)."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from npu_accept import families
from npu_accept.diagnose import corpus, pairings
from npu_accept.diagnose.findings import Context, diagnose
from npu_accept.diagnose.sources import read_input

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures" / "diagnose"
FIELD = REPO / "tests" / "fixtures" / "field"
CODE = "rknn-driver-below-documented-minimum"
ROWS = pairings.KNOWN_PAIRINGS
GITHUB_FILE = re.compile(r"^https://github\.com/[^/]+/[^/]+/(?:blob|tree)/(?P<commit>[0-9a-f]{40})/\S+$")
GITHUB_THREAD = re.compile(r"^https://github\.com/[^/]+/[^/]+/(?:issues|pull)/\d+$")


def _codes(path: Path) -> list[str]:
    return [f.code for f in diagnose(Context([read_input(str(path))]))]


def _field_codes(name: str) -> list[str]:
    return [f.code for f in corpus.run_case(corpus.load_case(FIELD / name)).findings]


def test_the_families_with_version_knowledge_have_their_file() -> None:
    assert {p for p, _ in families.data_files("versions.yaml")} == {"cvitek_tpu", "neutron", "rknpu"}
    assert {r.family for r in ROWS} == {"cvitek-tpu", "neutron", "rknpu"}


@pytest.mark.parametrize("row", ROWS, ids=lambda r: f"{r.family}:{r.component}:{r.version}")
def test_every_row_names_its_upstream_file_and_commit_or_its_thread(row: pairings.Pairing) -> None:
    if row.url:
        file = GITHUB_FILE.match(row.url)
        assert file or GITHUB_THREAD.match(row.url), row.url
        if file:
            assert row.commit == file.group("commit"), f"the URL's commit is not the row's: {row.url}"
    else:  # a field log of this repository, or unconfirmed
        assert not row.confirmed or "field report" in row.source, row
    for url in row.also:
        assert GITHUB_FILE.match(url) or GITHUB_THREAD.match(url), url
    if not row.confirmed:
        assert row.note, f"{row.component} {row.version}: an unconfirmed row says what is not confirmed"


def test_the_field_report_rows_point_at_a_fixture_that_exists() -> None:
    assert (REPO / "tests" / "fixtures" / "imx95-a0-field-report").is_dir()


# The seven rows of the Python table this data replaced (component, version, pairs_with as they were).
FORMER_ROWS = (
    ("neutron-converter (Neutron SDK)", "2.2.2", "NXP BSP LF 6.12.49_2.2.0 (kernel 6.12.49)"),
    ("Neutron delegate", "v1.0.0-f24d08e5", "NXP BSP LF 6.12.49_2.2.0 (kernel 6.12.49-lts-next)"),
    (
        "tflite-neutron-delegate source",
        "a5d640e64a2e7fb73a66ba2091cbe46b2dc4b45e",
        "NXP BSP LF 6.12.20_2.0.0",
    ),
    (
        "tflite-neutron-delegate source",
        "be8bf3997c70247bf46649f2304209fef82d4802",
        "NXP BSP LF 6.12.34_2.1.0",
    ),
    ("RKNN-Toolkit2", "2.3.2", "librknnrt 2.3.2 and rknn_server 2.3.2"),
    ("RKNN-Toolkit2 / Toolkit-Lite2", "2.3.0", "not librknnrt 1.3.0 or 1.4.0 (Invalid RKNN model version 6)"),
    (
        "a toolkit writing RKNN model format 6 (version not stated)",
        "format 6",
        "not librknnrt 1.5.0 (Invalid RKNN model version 6)",
    ),
)


def test_the_rows_that_were_python_are_all_still_there_and_confirmed() -> None:
    have = {(r.component, r.version, r.pairs_with): r for r in ROWS}
    for former in FORMER_ROWS:
        assert former in have and have[former].confirmed, former


def test_the_neutron_delegate_of_the_field_report_still_belongs_to_its_bsp() -> None:
    assert (
        pairings.known_delegate_bsp("v1.0.0-f24d08e5") == "NXP BSP LF 6.12.49_2.2.0 (kernel 6.12.49-lts-next)"
    )
    assert pairings.known_delegate_bsp("v1.0.0-a5d640e6") == "NXP BSP LF 6.12.20_2.0.0"
    assert pairings.known_delegate_bsp("v9.9.9-00000000") is None


def test_a_vx_delegate_commit_is_no_neutron_delegate() -> None:
    vx = next(r for r in ROWS if r.kind == "vx-delegate")
    assert pairings.known_delegate_bsp(f"v1.0.0-{vx.version[:8]}") is None


def test_an_unconfirmed_row_is_never_asserted(monkeypatch: pytest.MonkeyPatch) -> None:
    rkllm = pairings.driver_requirement("rkllm-runtime", "1.1.4")
    delegate = next(r for r in ROWS if r.kind == "neutron-delegate" and r.version.startswith("a5d640e6"))
    assert rkllm is not None and pairings.known_delegate_bsp("v1.0.0-a5d640e6")
    doubt = tuple(dataclasses.replace(r, confirmed=False) for r in (rkllm, delegate))
    monkeypatch.setattr(pairings, "KNOWN_PAIRINGS", doubt)
    assert pairings.driver_requirement("rkllm-runtime", "1.1.4") is None
    assert pairings.known_delegate_bsp("v1.0.0-a5d640e6") is None
    fires = FIXTURES / f"{CODE}.fires.log"
    monkeypatch.setattr(
        pairings, "KNOWN_PAIRINGS", (dataclasses.replace(rkllm, version="1.1.2", confirmed=False),)
    )
    assert CODE not in _codes(fires)


def test_recommended_drivers_are_no_requirement() -> None:
    for row in ROWS:
        if row.recommends_driver:
            assert pairings.driver_requirement(row.component, row.version) is None, row


def test_the_rkllm_minimums_are_those_of_each_release_guide() -> None:
    found = {r.version: r.needs_driver for r in ROWS if r.component == "rkllm-runtime" and r.needs_driver}
    assert found["1.0.1"] == "0.9.6"
    assert {v for v, need in found.items() if need == "0.9.8"} >= {"1.1.0", "1.1.4", "1.2.0", "1.3.0"}
    for row in ROWS:
        if row.needs_driver:
            assert row.confirmed and row.commit and "rknn-llm" in (row.url or ""), row


def test_the_finding_fires_on_real_logs_of_a_runtime_newer_than_its_driver() -> None:
    assert CODE in _codes(FIXTURES / f"{CODE}.fires.log")
    assert CODE in _field_codes("rknpu-rkllm-driver-too-low-187")


def test_the_finding_says_the_documented_minimum_and_where_it_is_written() -> None:
    finding = next(
        f for f in diagnose(Context([read_input(str(FIXTURES / f"{CODE}.fires.log"))])) if f.code == CODE
    )
    assert "rkllm-runtime 1.1.2" in finding.sentence and "0.9.8" in finding.sentence
    assert "0.9.7" in finding.sentence and "airockchip/rknn-llm at 71c79c3c" in finding.sentence
    assert finding.evidence and "rknpu driver version: 0.9.7" in finding.evidence[0].text


@pytest.mark.parametrize(
    "near",
    [
        "rknpu-radxa-rkllm-opencl-gpu-default-59",  # rkllm 1.0.1 on 0.9.6: the 1.0.1 guide's minimum
        "rknpu-malloc-npu-memory-vision-195",  # rkllm 1.1.4 on 0.9.8
        "rknpu-healthy-lite2-1-6-0-242",  # librknnrt 1.6.0 on 0.8.8: 0.9.2 is only recommended
    ],
)
def test_the_finding_stays_silent_on_its_near_misses(near: str) -> None:
    assert CODE not in _codes(FIXTURES / f"{CODE}.near-miss.log")
    assert CODE not in _field_codes(near)


def test_the_provenance_table_is_the_data() -> None:
    text = (REPO / "docs" / "PROVENANCE.md").read_text(encoding="utf-8")
    table = text.split("<!-- versions:begin -->\n", 1)[1].split("<!-- versions:end -->", 1)[0]
    assert table == pairings.versions_table(), "regenerate it: python3 -m npu_accept.diagnose.pairings"


ROW = "family: rknpu\nrows:\n  - {kind: k, component: c, version: v, pairs_with: p, source: s"


@pytest.mark.parametrize(
    ("text", "says"),
    [
        (ROW + "}\n", "'confirmed'"),
        (ROW + ", confirmed: false}\n", "'note'"),
        (ROW + ", confirmed: true, commit: v2.3.2}\n", "40-hex"),
        (ROW + ", confirmed: true, sorce: x}\n", "unknown key 'sorce'"),
        ("family: rknpu\n", "'rows'"),
        ("family: [\n", "not valid YAML"),
    ],
)
def test_a_bad_versions_file_is_named_with_the_fix(text: str, says: str) -> None:
    with pytest.raises(pairings.VersionsError) as error:
        pairings.parse_versions("rknpu/versions.yaml", text)
    assert "rknpu/versions.yaml" in str(error.value) and says in str(error.value)

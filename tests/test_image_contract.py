# SPDX-License-Identifier: MIT
"""The image and the suite agree: every requirement of every shipped profile is provided by the
image its kas entry builds, as the committed image facts (tests/data/image-facts/) describe it.

One test per (profile, requirement); a failure is one sentence naming the profile field, the kas
entry and what the image lacks. The facts must be fresh: their layer digest equals this tree's.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import jsonschema
import numpy as np
import pytest
import yaml
from imagecontract import (
    FACTS_DIR,
    PROFILE_ENTRIES,
    ROOT,
    Image,
    all_requirements,
    load_image,
    profiles_dir,
    requirements,
)
from loadscript import load_script

from npu_accept import schemaload

SCHEMA = ROOT / "src" / "npu_accept" / "schemas" / "image-facts.schema.json"
MEASURED = sorted(p.stem for p in FACTS_DIR.glob("*.json") if "derived_from" not in p.read_text())
DERIVED = sorted(p.stem for p in FACTS_DIR.glob("*.json") if "derived_from" in p.read_text())


def image_facts_script() -> ModuleType:
    return load_script("image-facts")


# ---------------------------------------------------------------- the facts themselves


def test_every_profile_entry_has_facts() -> None:
    stems = {p.stem for p in FACTS_DIR.glob("*.json")}
    for profile, entries in PROFILE_ENTRIES.items():
        for entry in entries:
            assert entry in stems, (
                f"{profile}: no tests/data/image-facts/{entry}.json; run scripts/image-facts"
            )
    assert len(MEASURED) == 6, MEASURED


@pytest.mark.parametrize("entry", MEASURED)
def test_facts_follow_their_schema_and_parsed_without_error(entry: str) -> None:
    facts = json.loads((FACTS_DIR / f"{entry}.json").read_text())
    jsonschema.validate(facts, schemaload.load(SCHEMA.name.removesuffix(".schema.json")))
    assert facts["entry"] == f"kas/{entry}.yml"
    assert any(line.endswith(" 0 errors.") for line in facts["parse"]["tail"]), facts["parse"]["tail"]


@pytest.mark.parametrize("entry", MEASURED)
def test_facts_are_fresh(entry: str) -> None:
    script = image_facts_script()
    facts = json.loads((FACTS_DIR / f"{entry}.json").read_text())
    kas = script.Entry.parse(":".join([facts["entry"], *facts["fragments"]]))
    now = script.layer_digest(kas, facts["collections"])
    made = facts["layer_digest"]
    changed = sorted(set(now["files"].items()) ^ set(made["files"].items()))
    names = sorted({name for name, _ in changed})
    assert now["sha256"] == made["sha256"], (
        f"tests/data/image-facts/{entry}.json was made from other meta-npu/kas files "
        f"({', '.join(names[:5])}): run scripts/image-facts for {':'.join(kas.kas_files)} "
        "as docs/image-facts.md says."
    )


@pytest.mark.parametrize("entry", DERIVED)
def test_a_derived_entry_names_its_source_and_every_difference(entry: str) -> None:
    data = json.loads((FACTS_DIR / f"{entry}.json").read_text())
    assert data["schema"] == "image-facts-derived/1" and data["entry"] == f"kas/{entry}.yml"
    assert (FACTS_DIR / f"{Path(data['derived_from']).stem}.json").is_file()
    assert data["not_parsed_because"].endswith(".")
    for difference in data["differences"]:
        assert set(difference) == {"what", "measured", "this_entry", "contract"}, difference


# ---------------------------------------------------------------- the contract


REQUIREMENTS = all_requirements()


@pytest.mark.parametrize("requirement", REQUIREMENTS, ids=[r.id for r in REQUIREMENTS])
def test_the_image_provides_what_the_profile_requires(requirement, tmp_path: Path) -> None:  # noqa: ANN001
    image = load_image(requirement.entry)
    verdict = requirement.check(image, tmp_path)
    assert verdict.problem is None, requirement.sentence(image, verdict.problem)


# ---------------------------------------------------------------- a profile asking too much fails


def changed_profiles(tmp_path: Path, name: str, change: dict) -> Path:
    """A copy of the shipped profiles where profile NAME has CHANGE (dotted keys) applied."""
    directory = tmp_path / "profiles"
    shutil.copytree(profiles_dir(), directory)
    data = yaml.safe_load((directory / f"{name}.yaml").read_text())
    for dotted, value in change.items():
        node = data
        *parents, last = dotted.split(".")
        for part in parents:
            node = node[int(part)] if part.isdigit() else node[part]
        node[int(last) if last.isdigit() else last] = value
    (directory / f"{name}.yaml").write_text(yaml.safe_dump(data))
    return directory


def failures(tmp_path: Path, name: str, change: dict, entry: str) -> dict[str, str]:
    from imagecontract import load_profile

    directory = changed_profiles(tmp_path, name, change)
    profile = load_profile(name, directory)
    image = load_image(entry)
    found = {}
    for requirement in requirements(name, profile, entry, directory):
        verdict = requirement.check(image, tmp_path / requirement.field)
        if verdict.problem:
            found[requirement.field] = requirement.sentence(image, verdict.problem)
    return found


@pytest.mark.parametrize(
    ("name", "entry", "change", "field", "words"),
    [
        (
            "rk3588-evb",
            "rk3588-evb",
            {"models.0.path": "/usr/share/npu-models/not-installed.rknn"},
            "models[0].path",
            "has no recipe that installs the model /usr/share/npu-models/not-installed.rknn",
        ),
        (
            "imx95-verdin",
            "imx95-verdin-community",
            {"memory.pool_min_bytes": 256 << 20},
            "memory.pool_min_bytes",
            "holds 134217728 bytes, fewer than 268435456",
        ),
        (
            "rk3576-evb",
            "rk3576-evb",
            {"memory.sram_bytes": 0x79000},
            "memory.sram_bytes",
            "fewer than 495616",
        ),
        (
            "rock-5b",
            "rock-5b",
            {"delegate.path": "/usr/lib/libnot_shipped_delegate.so"},
            "delegate.path",
            "has no package that installs the delegate (/usr/lib/libnot_shipped_delegate.so)",
        ),
        (
            "rk3588-evb",
            "rk3588-evb",
            {"daemon.path": "/usr/bin/no_such_daemon"},
            "daemon.restart_check",
            "starts /usr/bin/no_such_daemon",
        ),
        (
            "rock-5b",
            "rock-5b",
            {"models.0.inputs.0.random.dtype": "float32"},
            "models[0].inputs",
            "taking uint8:1x224x224x3, not float32:1x224x224x3",
        ),
        (
            "milkv-duo256m",
            "milkv-duo256m",
            {"memory.ion_min_bytes": 80 << 20},
            "memory.ion_min_bytes",
            "fewer than",
        ),
    ],
    ids=[
        "model-no-recipe-installs",
        "pool-larger-than-dtb",
        "sram-larger",
        "delegate-no-package",
        "daemon-missing",
        "input-dtype",
        "ion-larger",
    ],
)
def test_a_profile_asking_for_what_the_image_lacks_fails_with_its_sentence(
    name: str, entry: str, change: dict, field: str, words: str, tmp_path: Path
) -> None:
    found = failures(tmp_path, name, change, entry)
    assert field in found, found
    sentence = found[field]
    assert words in sentence, sentence
    assert sentence.startswith(f"Profile {name}, field {field}: the image of kas/{entry}.yml")
    assert sentence.endswith(".") and "\n" not in sentence


def broken_image(entry: str, edit) -> Image:  # noqa: ANN001
    image = load_image(entry)
    facts = copy.deepcopy(image.facts)
    edit(facts)
    return Image(entry, facts)


def test_a_kernel_fragment_without_the_driver_option_fails() -> None:
    from imagecontract import DRIVERS, driver_problem

    def drop(facts: dict) -> None:
        for local in facts["recipes"][facts["kernel"]]["layer_files"].values():
            local.get("options", {}).pop("CONFIG_ROCKCHIP_RKNPU", None)

    problem = driver_problem(broken_image("rk3588-evb", drop), DRIVERS["rknpu"], "rknpu")
    assert problem and "CONFIG_ROCKCHIP_RKNPU" in problem


@pytest.mark.parametrize(
    ("entry", "key", "words"),
    [
        ("imx95-verdin-community", "pool_min_bytes", "has no memory-region region"),
        # The decoders keep their own SRAM: only the NPU node's rockchip,sram counts.
        ("rk3576-evb", "sram_bytes", "has no rockchip,sram region"),
        ("rk3588-evb", "sram_bytes", "has no rockchip,sram region"),
    ],
)
def test_a_boot_tree_without_the_npu_fragment_fails(entry: str, key: str, words: str, tmp_path: Path) -> None:
    from imagecontract import memory_verdict

    def unhook(facts: dict) -> None:
        facts["recipes"][facts["kernel"]]["variables"]["NPU_DTS_FRAGMENT"] = ""

    verdict = memory_verdict(broken_image(entry, unhook), tmp_path, key, 1)
    assert verdict.problem and words in verdict.problem, verdict


# ---------------------------------------------------------------- model inputs read from the file


def tflite_inputs(data: bytes) -> list[str]:
    from bbevents import parsed_classes

    with parsed_classes([ROOT / "meta-npu" / "classes" / "npu-model.bbclass"], {}) as bbc:
        return bbc.function("npu_tflite_inputs")(data)


@pytest.mark.parametrize("which", ["FACE_DETECTION", "FACE_LANDMARK"])
def test_the_build_reads_a_real_models_input_as_tflite_does(which: str) -> None:
    import models
    from ai_edge_litert.interpreter import Interpreter

    path = models.model_path(getattr(models, which))
    interpreter = Interpreter(model_path=str(path))
    expected = [
        f"{np.dtype(d['dtype']).name}:{'x'.join(str(s) for s in d['shape'])}"
        for d in interpreter.get_input_details()
    ]
    assert tflite_inputs(path.read_bytes()) == expected


@pytest.mark.parametrize(
    ("data", "words"),
    [
        (b"not a model at all", 'no TFLite file identifier "TFL3"'),
        (b"\x10\x00\x00\x00TFL3\x00", "the file ends at byte"),
    ],
    ids=["not-tflite", "truncated"],
)
def test_an_unreadable_model_is_one_reason(data: bytes, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        tflite_inputs(data)


# ---------------------------------------------------------------- scripts/image-facts itself


def test_sections_are_found_among_other_log_lines() -> None:
    script = image_facts_script()
    log = (
        "2026-01-01 12:00:00 - INFO     - kas 5.5 started\n"
        '@@image-facts:begin parse@@\n{"tail": ["x"]}\n@@image-facts:end parse@@\n'
        "NOTE: something\n"
        '@@image-facts:begin recipe mesa@@\n{"a": 1}\n@@image-facts:end recipe mesa@@\n'
    )
    assert script.sections(log) == {"parse": {"tail": ["x"]}, "recipe mesa": {"a": 1}}


def run_script(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "image-facts"), *args],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
        env=env,
    )


@pytest.mark.parametrize(
    ("args", "code", "words"),
    [
        ((), 2, "no kas entry given"),
        (("kas/no-such-board.yml",), 2, "kas/no-such-board.yml does not exist"),
        (
            ("--from-output", "/nonexistent/log", "--entry", "kas/rock-5b.yml"),
            2,
            "cannot read /nonexistent/log",
        ),
        (("--from-output", "LOG", "--entry", "kas/rock-5b.yml"), 1, 'holds no "parse" section'),
        (
            ("--from-output", "BROKEN", "--entry", "kas/rock-5b.yml"),
            1,
            'the "parse" section of the output is not valid JSON',
        ),
        (("kas/rock-5b.yml",), 2, "kas is not on PATH"),
        (("--query",), 2, "bitbake is not on PATH"),
    ],
    ids=[
        "no-entry",
        "unknown-entry",
        "unreadable-log",
        "log-without-sections",
        "broken-section",
        "no-kas",
        "no-bitbake",
    ],
)
def test_bad_input_is_one_sentence_and_an_exit_code(
    args: tuple[str, ...], code: int, words: str, tmp_path: Path
) -> None:
    log = tmp_path / "kas.log"
    log.write_text("kas: ERROR - something else went wrong\n")
    broken = tmp_path / "broken.log"
    broken.write_text("@@image-facts:begin parse@@\n{not json\n@@image-facts:end parse@@\n")
    # A PATH with neither kas nor bitbake on it.
    env = dict(os.environ, PATH=str(tmp_path))
    proc = run_script(*({"LOG": str(log), "BROKEN": str(broken)}.get(a, a) for a in args), env=env)
    assert proc.returncode == code
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0] and lines[0].endswith("."), proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_kas_include_that_cannot_be_read_is_one_sentence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    script = image_facts_script()
    (tmp_path / "kas").mkdir()
    (tmp_path / "kas" / "board.yml").write_text("header:\n  version: 23\n  includes:\n    - kas/gone.yml\n")
    monkeypatch.setattr(script, "ROOT", tmp_path)
    assert script.main(["--digest", "kas/board.yml", "--collections", "core"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "the kas file kas/gone.yml cannot be read" in err[0], err


def test_the_digest_leaves_out_the_on_target_tool_sources_and_other_vendors_layers() -> None:
    script = image_facts_script()
    entry = script.Entry.parse("kas/rock-5b.yml")
    files = script.digested_files(entry, ["core", "rockchip"])
    assert "kas/rock-5b.yml" in files and "kas/base.yml" in files
    assert "meta-npu/recipes-tools/npu-tools/npu-tools_1.0.0.bb" in files
    assert not any(f.startswith("meta-npu/recipes-tools/npu-tools/files/") for f in files)
    assert not any(f.startswith("meta-npu/dynamic-layers/riscv-layer/") for f in files)
    assert any(f.startswith("meta-npu/dynamic-layers/rockchip/") for f in files)


def test_the_readme_boards_table_states_the_contract_tally() -> None:
    from imagecontract import tally_cell

    readme = (ROOT / "README.md").read_text().splitlines()
    headers = [i for i, line in enumerate(readme) if line.startswith("|") and "image ⇄ suite" in line]
    assert headers, 'README.md has no boards table column "image ⇄ suite": add it (docs/image-facts.md).'
    columns = [c.strip() for c in readme[headers[0]].strip("|").split("|")]
    column = columns.index("image ⇄ suite")
    for stems in PROFILE_ENTRIES.values():
        for stem in stems:
            rows = [line for line in readme if line.startswith("|") and f"`kas/{stem}.yml`" in line]
            assert rows, f"README.md's boards table has no row for kas/{stem}.yml."
            cell = [c.strip() for c in rows[0].strip("|").split("|")][column]
            assert cell == tally_cell(stem), (
                f"README.md says {cell!r} for kas/{stem}.yml; the contract says so otherwise."
            )


# ---------------------------------------------------------------- install and service evidence


def test_a_do_install_that_only_mentions_a_path_installs_nothing() -> None:
    from imagecontract import path_verdict

    def remove_instead(facts: dict) -> None:
        # FILES by a glob, so that only do_install can show the library.
        facts["recipes"]["librknnrt"]["variables"]["FILES:librknnrt"] = "/usr/lib/*.so"
        facts["recipes"]["librknnrt"]["do_install"] = (
            "    rm -f ${WORKDIR}/image/usr/lib/librknnrt.so\n"
            '    echo "/usr/lib/librknnrt.so is not shipped"\n'
        )

    image = broken_image("rk3588-evb", remove_instead)
    verdict = path_verdict(image, ["/usr/lib/librknnrt.so"], "the runtime")
    assert verdict.problem and "has no package that installs the runtime" in verdict.problem


def test_an_install_in_a_branch_bitbake_expanded_to_false_installs_nothing() -> None:
    from imagecontract import installs

    do_install = (
        "    if false; then\n"
        "        install -m 0755 ${WORKDIR}/sources-unpack/x ${WORKDIR}/image/usr/bin/x\n"
        "    fi\n"
    )
    assert not installs(do_install, "/usr/bin/x")
    assert installs(do_install.replace("false", "true"), "/usr/bin/x")


@pytest.mark.parametrize(
    "edit",
    [
        # systemd: the unit is disabled for the package that carries it.
        lambda v: v.update({"SYSTEMD_AUTO_ENABLE:rknn-server": "disable"}),
        # systemd: no package of the image lists the unit.
        lambda v: v.pop("SYSTEMD_SERVICE:rknn-server"),
    ],
    ids=["unit-disabled-per-package", "unit-in-no-package"],
)
def test_a_systemd_unit_that_does_not_start_at_boot_fails(edit) -> None:  # noqa: ANN001
    from imagecontract import service_problem

    def systemd(facts: dict) -> None:
        facts["init_manager"] = "systemd"
        edit(facts["recipes"]["rknn-server"]["variables"])

    problem = service_problem(broken_image("rk3588-evb", systemd), "/usr/bin/rknn_server")
    assert problem and "is not enabled" in problem


def test_an_init_script_registered_under_another_name_fails() -> None:
    from imagecontract import service_problem

    def rename(facts: dict) -> None:
        facts["recipes"]["rknn-server"]["variables"]["INITSCRIPT_NAME"] = "something-else"

    assert service_problem(load_image("rk3588-evb"), "/usr/bin/rknn_server") is None
    problem = service_problem(broken_image("rk3588-evb", rename), "/usr/bin/rknn_server")
    assert problem and "init script that starts /usr/bin/rknn_server" in problem

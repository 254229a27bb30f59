# SPDX-License-Identifier: MIT
"""Board profiles: every shipped profile validates; each kind of bad profile fails with one sentence
naming the file and the key."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from npu_accept.paths import packaged_profiles_dir
from npu_accept.profile import FileInput, ProfileError, RandomInput, load_profile

PROFILES = packaged_profiles_dir()
SHIPPED = sorted(PROFILES.glob("*.yaml"))


class _Unaliased(yaml.SafeDumper):
    """yaml.safe_dump writes an alias for an object met twice; a profile takes none."""

    def ignore_aliases(self, data: object) -> bool:
        return True


def _write(tmp_path: Path, data: object, name: str = "board.yaml") -> Path:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else yaml.dump(data, Dumper=_Unaliased, sort_keys=False))
    return path


def _imx95() -> dict:
    return yaml.safe_load((PROFILES / "imx95-verdin.yaml").read_text())


@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_every_shipped_profile_validates(path):
    profile = load_profile(path.stem, PROFILES)
    assert profile.name == path.stem
    assert profile.models


def test_imx95_profile_facts():
    profile = load_profile("imx95-verdin", PROFILES)
    assert profile.family == "neutron"
    assert profile.soc.soc_id == "i.MX95"
    assert profile.soc.revisions_ok == ("2.0",)
    assert profile.soc.revisions_bad == {"1.0": "A0", "1.1": "A1"}
    assert profile.driver is not None and profile.driver.devices == ("/dev/neutron0",)
    assert profile.delegate is not None and profile.delegate.required_custom_op == "NeutronGraph"
    assert isinstance(profile.models[0].inputs[0], RandomInput)


def test_generic_cpu_profile_has_no_npu():
    profile = load_profile("generic-cpu", PROFILES)
    assert not profile.has_npu and profile.driver is None and profile.delegate is None
    assert profile.models[0].backend == "tflite-cpu"


def test_profile_by_path_and_file_input(tmp_path):
    data = _imx95()
    import numpy as np

    np.save(tmp_path / "x.npy", np.zeros((1, 224, 224, 3), np.uint8))
    data["models"][0]["inputs"] = [{"file": "x.npy"}]
    profile = load_profile(str(_write(tmp_path, data)), PROFILES)
    (item,) = profile.models[0].inputs
    assert isinstance(item, FileInput) and item.path == (tmp_path / "x.npy").resolve()


def _error(tmp_path: Path, data: object) -> str:
    path = _write(tmp_path, data)
    with pytest.raises(ProfileError) as info:
        load_profile(str(path), PROFILES)
    message = str(info.value)
    assert str(path) in message, message
    assert "\n" not in message and "Traceback" not in message
    return message


def test_unknown_key_is_named(tmp_path):
    data = _imx95()
    data["models"][0]["thresholds"]["cosin"] = 0.9
    assert "key 'models[0].thresholds.cosin' is invalid (unknown key)" in _error(tmp_path, data)


def test_missing_key_is_named(tmp_path):
    data = _imx95()
    del data["performance"]
    assert "key 'performance' is invalid (missing)" in _error(tmp_path, data)


def test_wrong_type_is_named(tmp_path):
    data = _imx95()
    data["performance"]["runs"] = "fifty"
    assert "key 'performance.runs' is invalid" in _error(tmp_path, data)


def test_wrong_family_is_named(tmp_path):
    data = _imx95()
    data["family"] = "tpu9000"
    assert "key 'family' is invalid" in _error(tmp_path, data)


def test_bad_yaml_names_the_line(tmp_path):
    assert "is not valid YAML at line 2" in _error(tmp_path, "schema: npu-profile/1\nname: a: b\n")


def test_not_a_mapping(tmp_path):
    assert "must be a YAML mapping" in _error(tmp_path, "- just\n- a list\n")


def test_missing_input_file_is_named(tmp_path):
    data = _imx95()
    data["models"][0]["inputs"] = [{"file": "nowhere.npy"}]
    assert "key 'models.mobilenet_v1_quant.inputs[0].file'" in _error(tmp_path, data)


def test_duplicate_model_names(tmp_path):
    data = _imx95()
    data["models"].append(dict(data["models"][0]))
    assert "names model 'mobilenet_v1_quant' twice" in _error(tmp_path, data)


def test_unknown_profile_name_lists_the_known_ones():
    with pytest.raises(ProfileError) as info:
        load_profile("imx96-nonexistent", PROFILES)
    assert "Unknown board profile 'imx96-nonexistent'" in str(info.value)
    assert "imx95-verdin" in str(info.value) and "generic-cpu" in str(info.value)


def test_missing_profile_path():
    with pytest.raises(ProfileError, match="does not exist"):
        load_profile("/nonexistent/board.yaml", PROFILES)


# ------------------------------------------------ issue 28: no input can accept a failing board

# Mappings whose keys are the user's own (revision strings, delegate options), not profile keys.
FREE_FORM = {"soc.revisions_bad", "delegate.options", "flash.soc_revisions"}


def _key_paths(node: object, where: str = "") -> list[tuple[str, ...]]:
    """Every key of a profile's YAML, as the path of keys and list indexes leading to it."""
    found: list[tuple] = []
    if isinstance(node, dict) and where.rstrip("0123456789[]") not in FREE_FORM:
        for key, value in node.items():
            found.append((key,))
            found += [(key, *rest) for rest in _key_paths(value, f"{where}.{key}".lstrip("."))]
    elif isinstance(node, list):
        for index, item in enumerate(node):
            found += [(index, *rest) for rest in _key_paths(item, where)]
    return found


def _misspelled(data: dict, keys: tuple) -> tuple[dict, str]:
    """A deep copy of `data` with the key at `keys` misspelled (last letter dropped, or doubled)."""
    copy = yaml.safe_load(yaml.dump(data, Dumper=_Unaliased))
    node = copy
    for part in keys[:-1]:
        node = node[part]
    key = keys[-1]
    wrong = key[:-1] if len(key) > 4 else key + key[-1]
    node[wrong] = node.pop(key)
    return copy, wrong


CASES = [
    (path, keys)
    for path in SHIPPED
    for keys in _key_paths(yaml.safe_load(path.read_text()))
    if isinstance(keys[-1], str)
]


@pytest.mark.parametrize(("path", "keys"), CASES, ids=[f"{p.stem}:{'.'.join(map(str, k))}" for p, k in CASES])
def test_every_misspelled_key_of_every_shipped_profile_is_refused(tmp_path, path, keys):
    data = yaml.safe_load(path.read_text())
    _anchor_files(data)
    bad, wrong = _misspelled(data, keys)
    message = _error(tmp_path, bad)
    assert f".{wrong}'" in message or f"'{wrong}'" in message, message
    assert "unknown key" in message and f"'{keys[-1]}'" in message, message


def _anchor_files(data: dict) -> None:
    """The shipped profile's .npy files named by absolute path (the copy lives in tmp_path)."""
    for model in data["models"]:
        for item in model["inputs"]:
            if "file" in item:
                item["file"] = str((PROFILES / item["file"]).resolve())
        if model.get("golden"):
            model["golden"] = [str((PROFILES / g).resolve()) for g in model["golden"]]


def _shipped(name: str) -> dict:
    data = yaml.safe_load((PROFILES / f"{name}.yaml").read_text())
    _anchor_files(data)
    return data


def test_sram_bytes_typo_is_refused_not_skipped(tmp_path):
    # Why: `sram_byte` loaded, check 6 skipped and a board without NPU SRAM was ACCEPTED.
    data = _shipped("rk3588-evb")
    data["memory"] = {"sram_byte": 978944}
    message = _error(tmp_path, data)
    assert "key 'memory.sram_byte' is invalid (unknown key)" in message
    assert "the nearest valid key is 'sram_bytes'" in message


def test_pool_min_bytes_typo_is_refused(tmp_path):
    # Why: `pool_min_byte` made a 16 MiB Neutron pool pass "at least 0 MiB".
    data = _imx95()
    data["memory"] = {"pool_min_byte": 134217728}
    assert "the nearest valid key is 'pool_min_bytes'" in _error(tmp_path, data)


def test_a_missing_memory_requirement_is_a_profile_error(tmp_path):
    data = _shipped("rk3588-evb")
    data["memory"] = {}
    assert "key 'memory.sram_bytes' is missing" in _error(tmp_path, data)
    del data["memory"]
    assert "key 'memory' is missing" in _error(tmp_path, data)


def test_memory_null_says_not_applicable(tmp_path):
    data = _shipped("rk3588-evb")
    data["memory"] = None
    profile = load_profile(str(_write(tmp_path, data)), PROFILES)
    assert profile.memory is None


def test_another_familys_memory_key_is_refused(tmp_path):
    data = _shipped("rk3588-evb")
    data["memory"] = {"sram_bytes": 978944, "pool_min_bytes": 1}
    assert "key 'memory.pool_min_bytes' is invalid (not a key of family rknpu)" in _error(tmp_path, data)


def test_a_missing_stated_section_is_a_profile_error(tmp_path):
    data = _imx95()
    del data["runtime"]
    assert "key 'runtime' is missing" in _error(tmp_path, data)
    data = _imx95()
    del data["pairing"]
    assert "key 'pairing' is missing" in _error(tmp_path, data)


def test_the_memory_check_is_not_a_skip_for_a_typo(tmp_path):
    # The whole chain: a profile whose sram_bytes is misspelled never reaches check 6.
    data = _shipped("rk3588-evb")
    data["memory"]["sram_byte"] = data["memory"].pop("sram_bytes")
    with pytest.raises(ProfileError):
        load_profile(str(_write(tmp_path, data)), PROFILES)


@pytest.mark.parametrize(
    ("key", "value"), [("cosine", -1), ("cosine", 0.2), ("euclid", -5), ("sqnr_db", 0), ("top_k_agree", 0)]
)
def test_thresholds_that_cannot_fail_are_refused(tmp_path, key, value):
    # Why: cosine -1 … accepted an NPU whose outputs were off by 0.5 everywhere.
    data = _imx95()
    data["models"][0]["thresholds"][key] = value
    message = _error(tmp_path, data)
    assert (
        f"key 'models[0].thresholds.{key}' is {value}, which a constant or shifted output passes" in message
    )


@pytest.mark.parametrize("given", ["../../../../etc/hostname", "/etc/passwd"])
def test_profile_paths_are_confined(tmp_path, given):
    # Why: such paths were not refused at load; every board was blamed instead (exit 1).
    data = _imx95()
    data["models"][0]["inputs"] = [{"file": given}]
    assert "outside the profile's directory" in _error(tmp_path, data)
    data = _imx95()
    data["models"][0]["golden"] = [given]
    assert "key 'models.mobilenet_v1_quant.golden[0]' points at" in _error(tmp_path, data)


def test_a_link_to_a_file_outside_is_refused_as_a_path_is(tmp_path):
    # The shipped RKNN goldens are links to the layer's one copy and load (the shipped profiles'
    # tests); a user's own link out of the profile's directory is refused like `../`.
    elsewhere = tmp_path.parent / f"{tmp_path.name}-elsewhere.npy"
    elsewhere.write_bytes((PROFILES / "rknn" / "face_landmark.in0.npy").read_bytes())
    (tmp_path / "in.npy").symlink_to(elsewhere)
    data = _imx95()
    data["models"][0]["inputs"] = [{"file": "in.npy"}]
    assert "outside the profile's directory" in _error(tmp_path, data)
    data["models"][0]["inputs"] = [{"file": str(PROFILES / "rknn" / "face_landmark.in0.npy")}]
    assert load_profile(str(_write(tmp_path, data)), PROFILES).models[0].inputs[0].path.is_file()


def test_npy_headers_are_checked_at_load(tmp_path):
    (tmp_path / "x.npy").write_text("not an array")
    data = _imx95()
    data["models"][0]["inputs"] = [{"file": "x.npy"}]
    assert "key 'models.mobilenet_v1_quant.inputs[0].file'" in _error(tmp_path, data)


def test_yaml_aliases_are_refused_fast(tmp_path):
    # Why: a billion-laughs profile ran 40 s to INTERNALERROR MemoryError at 1.3 GB, exit 3.
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for n in range(1, 10):
        prev, cur = chr(ord("a") + n - 1), chr(ord("a") + n)
        lines.append(f"{cur}: &{cur} [{', '.join(['*' + prev] * 9)}]")
    import time

    started = time.monotonic()
    assert "uses a YAML alias at line 2" in _error(tmp_path, "\n".join(lines) + "\n")
    assert time.monotonic() - started < 1


def test_a_huge_profile_is_refused_before_parsing(tmp_path):
    # Why: a 50 MB profile took 40 s.
    text = "schema: npu-profile/1\n" + "# padding\n" * (300 * 1024)
    assert "is larger than 1 MiB" in _error(tmp_path, text)


def test_a_fifo_profile_is_refused_without_blocking(tmp_path):
    import os

    fifo = tmp_path / "board.yaml"
    os.mkfifo(fifo)
    with pytest.raises(ProfileError, match="is not a regular file"):
        load_profile(str(fifo), PROFILES)


def test_sections_are_typed_and_read_as_mappings():
    from npu_accept.profile import DaemonSpec, MemorySpec

    profile = load_profile("rk3588-evb", PROFILES)
    assert isinstance(profile.memory, MemorySpec) and profile.memory.sram_bytes == 978944
    assert profile.memory.get("sram_bytes") == 978944 and profile.memory.get("pool_min_bytes") is None
    assert isinstance(profile.daemon, DaemonSpec)
    assert {**profile.daemon} == {
        "name": "rknn_server",
        "path": "/usr/bin/rknn_server",
        "restart_check": True,
        "restart_timeout_s": 10,
    }


def test_a_family_without_npu_memory_takes_an_empty_or_null_memory(tmp_path):
    data = _shipped("rock-5b")
    data["memory"] = {}
    assert load_profile(str(_write(tmp_path, data)), PROFILES).memory is not None
    data["memory"] = {"sram_bytes": 1}
    assert "key 'memory.sram_bytes' is invalid (not a key of family rocket); write 'memory: null'" in _error(
        tmp_path, data
    )

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


def _write(tmp_path: Path, data: object, name: str = "board.yaml") -> Path:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else yaml.safe_dump(data, sort_keys=False))
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

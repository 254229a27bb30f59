# SPDX-License-Identifier: MIT
"""scripts/br-evaluate: Buildroot's own evaluation of the external tree's configurations.

The checks are pure functions over what Buildroot produces (.config text, show-info JSON, the
.hash files, the kernel's .config); CI exercises each with inputs written here in those formats,
one that passes and one that fails. Running Buildroot itself needs a Buildroot tree, which CI
does not have (Buildroot is not on PyPI or in Debian): those tests run when NPU_BUILDROOT_DIR
names a Buildroot 2025.02.x tree (e.g. `git archive 2025.02.16` of buildroot.org's repository)
and are skipped, with that reason, otherwise. The Milk-V Duo 256M base comes from Milk-V's SDK,
not upstream Buildroot: its test also needs NPU_DUO_DEFCONFIG, the SDK's
buildroot/configs/milkv-duo256m-musl-riscv64-sd_defconfig.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from loadscript import load_script

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "br-evaluate"
TREE = ROOT / "buildroot"
BOARD = TREE / "board"


br = load_script("br-evaluate")


def evaluate(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True, check=False
    )


# ------------------------------------------------------------------ reading configurations


def test_config_values_and_unset_options_are_read() -> None:
    text = 'BR2_A=y\n# BR2_B is not set\nBR2_C="x y"\n# a comment\nCONFIG_D=m\n'
    assert br.read_config(text) == {"BR2_A": "y", "BR2_B": "n", "BR2_C": '"x y"', "CONFIG_D": "m"}


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_base_is_the_one_every_fragment_names(tmp_path: Path) -> None:
    a = write(tmp_path / "a.config", "# base defconfig: one_defconfig, two_defconfig\nBR2_A=y\n")
    b = write(tmp_path / "b.config", "# base defconfig: two_defconfig\nBR2_B=y\n")
    none = write(tmp_path / "c.config", "BR2_C=y\n")
    assert br.choose_base([a, b, none]) == "two_defconfig"
    with pytest.raises(br.InputError, match="several bases"):
        br.choose_base([a])
    other = write(tmp_path / "d.config", "# base defconfig: three_defconfig\n")
    with pytest.raises(br.InputError, match="no common base"):
        br.choose_base([b, other])
    with pytest.raises(br.InputError, match="give --defconfig"):
        br.choose_base([none])


def test_our_fragments_name_their_bases() -> None:
    assert br.choose_base([BOARD / "rock5b" / "npu.config"]) == "rock5b_defconfig"
    rk3576 = [BOARD / "rockchip" / f for f in ("rknpu.config", "rk3576-evb/npu.config")]
    assert br.choose_base(rk3576) == "rockchip_rk3576_evb_defconfig"


# ------------------------------------------------------------------ the checks: pass and fail


def test_fragment_values_kept_and_lost() -> None:
    settings = {"BR2_A": ("y", "f.config"), "BR2_B": ('"v"', "f.config"), "BR2_C": ("n", "f.config")}
    assert br.check_fragment_values(settings, {"BR2_A": "y", "BR2_B": '"v"'}).status == "pass"
    check = br.check_fragment_values(settings, {"BR2_B": '"w"', "BR2_C": "y"})
    assert check.status == "fail" and len(check.details) == 3
    assert check.details[0].startswith("BR2_A=y (f.config) is not in the final .config after olddefconfig")


def test_base_list_values_must_be_kept() -> None:
    base = {"BR2_GLOBAL_PATCH_DIR": '"board/x/patches"'}
    extended = {"BR2_GLOBAL_PATCH_DIR": '"board/x/patches $(BR2_EXTERNAL_NPU_PATH)/p"'}
    settings = {"BR2_GLOBAL_PATCH_DIR": (extended["BR2_GLOBAL_PATCH_DIR"], "f.config")}
    assert br.check_base_values_kept(settings, base, extended).status == "pass"
    replaced = {"BR2_GLOBAL_PATCH_DIR": '"$(BR2_EXTERNAL_NPU_PATH)/p"'}
    check = br.check_base_values_kept(
        {"BR2_GLOBAL_PATCH_DIR": (replaced["BR2_GLOBAL_PATCH_DIR"], "f.config")}, base, replaced
    )
    assert check.status == "fail" and "drops board/x/patches" in check.details[0]


def show_info_entry(
    name: str, source: str, hashes: list[Path], licenses: list[str], local: bool = False
) -> dict:
    uri = "local+/src" if local else "https+https://example.org"
    return {
        "name": name,
        "version": "1.0",
        "package_dir": str(TREE / "package" / name),
        "downloads": [{"source": source, "uris": [uri]}],
        "hashes": [str(h) for h in hashes],
        "license_files": licenses,
    }


def test_packages_requested_must_be_built() -> None:
    settings = {"BR2_PACKAGE_LIBRKNNRT": ("y", "f.config"), "BR2_PACKAGE_RKNN_SERVER": ("y", "f.config")}
    info = {"librknnrt": show_info_entry("librknnrt", "a.tar.gz", [], [])}
    check = br.check_packages(settings, info, TREE)
    assert check.status == "fail"
    assert check.details == ["BR2_PACKAGE_RKNN_SERVER=y is set but Buildroot does not build rknn-server"]
    info["rknn-server"] = show_info_entry("rknn-server", "a.tar.gz", [], [])
    assert br.check_packages(settings, info, TREE).status == "pass"


HASH = "sha256  " + "0" * 64


def test_hash_files_must_name_archives_and_licence_files(tmp_path: Path) -> None:
    good = write(tmp_path / "good.hash", f"{HASH}  pkg-1.0.tar.gz\n{HASH}  LICENSE\n")
    reason = write(
        tmp_path / "reason.hash", f"# pkg-1.0.tar.gz: GitHub archive, sha256 unknown here\n{HASH}  LICENSE\n"
    )
    bare = write(tmp_path / "bare.hash", f"{HASH}  LICENSE\n")
    cases = {
        "good": (show_info_entry("npu-run", "pkg-1.0.tar.gz", [good], ["LICENSE"]), set(), "pass"),
        "reasoned": (
            show_info_entry("npu-run", "pkg-1.0.tar.gz", [reason], ["LICENSE"]),
            {"pkg-1.0.tar.gz"},
            "pass",
        ),
        "exempt, no reason": (
            show_info_entry("npu-run", "pkg-1.0.tar.gz", [bare], ["LICENSE"]),
            {"pkg-1.0.tar.gz"},
            "fail",
        ),
        "archive without hash": (
            show_info_entry("npu-run", "pkg-1.0.tar.gz", [bare], ["LICENSE"]),
            set(),
            "fail",
        ),
        "licence without hash": (
            show_info_entry("npu-run", "pkg-1.0.tar.gz", [good], ["COPYING"]),
            set(),
            "fail",
        ),
        "no hash file": (
            show_info_entry("npu-run", "pkg-1.0.tar.gz", [tmp_path / "none.hash"], []),
            set(),
            "fail",
        ),
        "local source": (show_info_entry("npu-run", "pkg-1.0.tar.gz", [], [], local=True), set(), "pass"),
    }
    for case, (info, unchecked, status) in cases.items():
        check = br.check_hashes({"npu-run": info}, TREE, unchecked)
        assert check.status == status, (case, check)


def test_kernel_options_kept_and_lost() -> None:
    wanted = {
        "CONFIG_DRM_ACCEL_ROCKET": ("m", "rocket.cfg"),
        "CONFIG_ROCKCHIP_RKNPU_DMA_HEAP": ("n", "rknpu.cfg"),
    }
    assert br.check_kernel_options(wanted, {"CONFIG_DRM_ACCEL_ROCKET": "m"}).status == "pass"
    check = br.check_kernel_options(wanted, {"CONFIG_ROCKCHIP_RKNPU_DMA_HEAP": "y"})
    assert check.status == "fail"
    after = "after the kernel's olddefconfig"
    assert check.details == [
        f"CONFIG_DRM_ACCEL_ROCKET=m (rocket.cfg) is not in the kernel's .config {after}",
        f"CONFIG_ROCKCHIP_RKNPU_DMA_HEAP=n (rknpu.cfg) became y {after}",
    ]


def test_make_stop_sentence_is_extracted() -> None:
    stderr = "/x/external.mk:55: *** board/rock5b/npu.config needs a mainline base: use X.  Stop.\n"
    proc = subprocess.CompletedProcess([], 2, "", stderr)
    assert br.stop_sentence(proc) == "board/rock5b/npu.config needs a mainline base: use X."
    kernel = subprocess.CompletedProcess(
        [], 2, "", '***\n*** Can\'t find default configuration "x"!\n***\nmake: *** [M] Error 2\n'
    )
    assert br.stop_sentence(kernel) == 'Can\'t find default configuration "x"!'


def test_summary_names_the_configuration_and_the_verdict() -> None:
    text = br.summary(
        {
            "buildroot": {"version": "2025.02.16"},
            "external": str(TREE),
            "defconfig": "rock5b_defconfig",
            "fragments": [str(BOARD / "rock5b" / "npu.config")],
            "checks": [{"name": "x", "status": "fail", "summary": "s", "details": ["d"]}],
            "verdict": "fail",
        }
    )
    assert (
        text.splitlines()[0]
        == "br-evaluate: Buildroot 2025.02.16, rock5b_defconfig + board/rock5b/npu.config"
    )
    assert text.splitlines()[-1] == "verdict: fail"


# ------------------------------------------------------------------ bad usage: one sentence, exit 2


@pytest.mark.parametrize(
    ("args", "wanted"),
    [
        ((), "give the Buildroot directory and at least one fragment"),
        (("/nonexistent", BOARD / "rock5b" / "npu.config"), "is not a Buildroot tree"),
        (("--bogus",), "unknown option --bogus"),
    ],
)
def test_bad_usage_is_one_sentence(args: tuple, wanted: str) -> None:
    proc = evaluate(*args)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and wanted in proc.stderr and "Traceback" not in proc.stderr


def fake_buildroot_layout(tmp: Path) -> Path:
    """Only what br-evaluate validates before it runs make: support/kconfig/merge_config.sh."""
    (tmp / "support" / "kconfig").mkdir(parents=True)
    (tmp / "support" / "kconfig" / "merge_config.sh").write_text("")
    (tmp / "configs").mkdir()
    return tmp


def test_missing_fragment_and_unknown_base_are_one_sentence(tmp_path: Path) -> None:
    buildroot = fake_buildroot_layout(tmp_path)
    proc = evaluate(buildroot, tmp_path / "missing.config")
    assert proc.returncode == 2 and "fragment" in proc.stderr and "does not exist" in proc.stderr
    proc = evaluate(buildroot, BOARD / "milkv-duo256m" / "npu.config")
    assert proc.returncode == 2
    assert "milkv-duo256m-musl-riscv64-sd_defconfig is in neither" in proc.stderr
    assert "--defconfig-file" in proc.stderr and proc.stderr.count("\n") == 1


# ------------------------------------------------------------------ Buildroot itself (needs a tree)

BUILDROOT = os.environ.get("NPU_BUILDROOT_DIR")
needs_buildroot = pytest.mark.skipif(
    not BUILDROOT,
    reason="NPU_BUILDROOT_DIR is not set: CI has no Buildroot tree (Buildroot is not on PyPI or in Debian)",
)
ROCKCHIP = {
    "rk3588": [
        BOARD / "rockchip" / f
        for f in ("rknpu.config", "rk3588-evb/npu.config", "accept-rknn-license.config")
    ],
    "rk3576": [
        BOARD / "rockchip" / f
        for f in ("rknpu.config", "rk3576-evb/npu.config", "accept-rknn-license.config")
    ],
    "rock5b": [BOARD / "rock5b" / "npu.config"],
}


def report(*args: str | Path) -> tuple[int, dict]:
    proc = evaluate(BUILDROOT, *args, "--json")
    assert proc.returncode in (0, 1), proc.stderr
    data = json.loads(proc.stdout)
    assert data["schema"] == "br-evaluate/1"
    return proc.returncode, data


def statuses(data: dict) -> dict[str, str]:
    return {c["name"]: c["status"] for c in data["checks"]}


@needs_buildroot
@pytest.mark.parametrize("board", sorted(ROCKCHIP))
def test_rockchip_configurations_pass(board: str) -> None:
    code, data = report(*ROCKCHIP[board])
    assert code == 0, json.dumps(data["checks"], indent=1)
    names = {p["name"] for p in data["packages"]}
    assert {"npu-run", "python-ai-edge-litert"} <= names
    if board == "rock5b":
        assert {"mesa3d-teflon", "npu-model-mobilenet-v1-quant"} <= names
    else:
        assert {"librknnrt", "rknn-server", "rknn-mobilenet-demo", "npu-model-mediapipe-rknn"} <= names
    assert statuses(data)["kernel options"] in ("pass", "skip")


@needs_buildroot
def test_vendor_fragments_on_rock5b_defconfig_stop_at_make_time() -> None:
    code, data = report(*ROCKCHIP["rk3588"], "--defconfig", "rock5b_defconfig")
    assert code == 1 and statuses(data)["make-time checks"] == "fail"
    (sentence,) = next(c for c in data["checks"] if c["name"] == "make-time checks")["details"]
    assert "needs one of this tree's base defconfigs" in sentence


@needs_buildroot
def test_missing_licence_opt_in_stops_at_make_time() -> None:
    code, data = report(*ROCKCHIP["rk3588"][:2])
    assert code == 1
    (sentence,) = next(c for c in data["checks"] if c["name"] == "make-time checks")["details"]
    assert "Rockchip's proprietary licence" in sentence


@needs_buildroot
@pytest.mark.skipif(
    not os.environ.get("NPU_DUO_DEFCONFIG"), reason="NPU_DUO_DEFCONFIG (Milk-V's SDK defconfig) is not set"
)
def test_duo256m_configuration_passes() -> None:
    code, data = report(
        BOARD / "milkv-duo256m" / "npu.config", "--defconfig-file", os.environ["NPU_DUO_DEFCONFIG"]
    )
    assert code == 0, json.dumps(data["checks"], indent=1)
    assert {"cvi-tpu", "cviruntime", "npu-run"} <= {p["name"] for p in data["packages"]}


def test_hash_files_come_from_printvars_where_show_info_has_none(tmp_path: Path) -> None:
    # Buildroot's show-info lists a package's hash files from 2025.02.15 on; before, printvars.
    listed = show_info_entry("linux", "linux-6.18.39.tar.xz", [tmp_path / "a.hash"], [])
    assert br.hash_files_of("linux", listed, TREE, {}) == [tmp_path / "a.hash"]
    older = {k: v for k, v in listed.items() if k != "hashes"}
    printvars = {"LINUX_HASH_FILES": f"{tmp_path}/b.hash {tmp_path}/c.hash"}
    assert br.hash_files_of("linux", older, TREE, printvars) == [tmp_path / "b.hash", tmp_path / "c.hash"]
    host = br.hash_files_of("host-cvibuilder", {}, TREE, {"HOST_CVIBUILDER_HASH_FILES": "x.hash"})
    assert host == [Path("x.hash")]
    assert br.hash_files_of("cvi-tpu", {}, TREE, {}) == [TREE / "package" / "cvi-tpu" / "cvi-tpu.hash"]

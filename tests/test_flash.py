# SPDX-License-Identifier: MIT
"""npu-flash: dry-run command lines per board, device safety on real loop devices, a real
bmaptool copy verified by reading the loop device back, and bad input.

The device checks run against real loop devices (losetup); only the sysfs `removable`
attribute is faked (a loop device is never removable), through the SystemView parameter.
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from npu_accept.flash import cli
from npu_accept.flash.cli import run
from npu_accept.flash.device import SystemView
from npu_accept.paths import packaged_profiles_dir
from npu_accept.sim.harness import TwinFile

REPO = Path(__file__).resolve().parent.parent
PROFILES = packaged_profiles_dir()

# The flash: section each shipped board profile carries (docs/design.md "Flashing").
FLASH_SECTIONS = {
    "imx95-verdin": {
        "method": "uuu",
        "uuu_script": "emmc_all",
        "boot_container": "imx-boot-imx95-19x19-verdin-sd.bin-flash_a55",
        "ele_container": "imx-boot-tools/mx95{rev}-ahab-container.img",
        "soc_revisions": {"1.0": "A0", "1.1": "A1", "2.0": "B0"},
    },
    # JeffyCN/meta-rockchip u-boot-rockchip deploys loader.bin (-> <soc>_spl_loader_*.bin)
    "rk3588-evb": {"method": "rkdeveloptool", "loader": "loader.bin"},
    "rk3576-evb": {"method": "rkdeveloptool", "loader": "loader.bin"},
    "rock-5b": {"method": "bmaptool"},
    "milkv-duo256m": {"method": "bmaptool"},
    "generic-cpu": {"method": "bmaptool"},
}
FAMILIES = {
    "imx95-verdin": "neutron",
    "rk3588-evb": "rknpu",
    "rk3576-evb": "rknpu",
    "rock-5b": "rocket",
    "milkv-duo256m": "cvitek-tpu",
    "generic-cpu": "none",
}


def _base_profile(name: str, family: str) -> dict:
    return {
        "schema": "npu-profile/1",
        "name": name,
        "family": family,
        "soc": {},
        "driver": None,
        "delegate": None,
        "models": [
            {
                "name": "m",
                "path": "/usr/share/npu-models/m.tflite",
                "inputs": [{"random": {"shape": [1, 4], "dtype": "uint8"}}],
                "thresholds": {"cosine": 0.99},
            }
        ],
        "performance": {"runs": 10, "warmup": 1, "min_speedup": 1.0, "regression_tolerance": 0.2},
    }


def test_every_shipped_profile_carries_its_documented_flash_section() -> None:
    shipped = {path.stem: yaml.safe_load(path.read_text()) for path in PROFILES.glob("*.yaml")}
    assert set(shipped) == set(FLASH_SECTIONS)
    for name, data in shipped.items():
        assert data.get("flash") == FLASH_SECTIONS[name], name


def board_profile(name: str, directory: Path) -> Path:
    """A copy of the board's shipped profile (a minimal one for a board without)."""
    real = PROFILES / f"{name}.yaml"
    data = yaml.safe_load(real.read_text()) if real.is_file() else _base_profile(name, FAMILIES[name])
    data.setdefault("flash", FLASH_SECTIONS[name])
    for model in data.get("models") or []:  # the copy lives elsewhere: anchor the profile's own files
        for item in model.get("inputs") or []:
            if "file" in item:
                item["file"] = str((PROFILES / item["file"]).resolve())
        if model.get("golden"):
            model["golden"] = [str((PROFILES / g).resolve()) for g in model["golden"]]
    path = directory / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def disk_image(path: Path, size_mib: int = 8, seed: int = 1) -> Path:
    """A real MBR-partitioned disk image (sfdisk) with data in its first partition."""
    with path.open("wb") as handle:
        handle.truncate(size_mib * 1024 * 1024)
    subprocess.run(
        ["sfdisk", "-q", str(path)], input="label: dos\nstart=2048, type=83\n", text=True, check=True
    )
    rng = __import__("random").Random(seed)
    with path.open("r+b") as handle:
        for offset in (1024 * 1024, 3 * 1024 * 1024 + 512):
            handle.seek(offset)
            handle.write(rng.randbytes(70000))
    return path


def flash(argv: list[str], system: SystemView | None = None) -> tuple[int, str, str]:
    err = io.StringIO()
    out_before = sys.stdout
    out = io.StringIO()
    sys.stdout = out
    try:
        code = run(argv, err, system)
    finally:
        sys.stdout = out_before
    return code, out.getvalue(), err.getvalue()


def assert_one_sentence(code: int, err: str, *fragments: str) -> None:
    assert code == 1, err
    lines = [line for line in err.splitlines() if line.startswith("npu-flash: ")]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


# ---------------------------------------------------------------- i.MX95: uuu


@pytest.fixture
def imx_deploy(tmp_path: Path) -> Path:
    """A deploy directory as imx-boot leaves it: the container embeds the B0 ELE firmware."""
    deploy = tmp_path / "deploy"
    (deploy / "imx-boot-tools").mkdir(parents=True)
    b0 = os.urandom(4096)
    a0 = os.urandom(4096)
    (deploy / "imx-boot-tools" / "mx95b0-ahab-container.img").write_bytes(b0)
    (deploy / "imx-boot-tools" / "mx95a0-ahab-container.img").write_bytes(a0)
    (deploy / "imx-boot-imx95-19x19-verdin-sd.bin-flash_a55").write_bytes(
        os.urandom(1024) + b0 + os.urandom(2048)
    )
    disk_image(deploy / "npu-image-imx95-19x19-verdin.rootfs.wic")
    subprocess.run(["zstd", "-q", "-k", str(deploy / "npu-image-imx95-19x19-verdin.rootfs.wic")], check=True)
    return deploy


def test_imx95_dry_run_prints_the_uuu_command(tmp_path: Path, imx_deploy: Path) -> None:
    profile = board_profile("imx95-verdin", tmp_path)
    image = imx_deploy / "npu-image-imx95-19x19-verdin.rootfs.wic.zst"
    code, out, err = flash(
        ["--board", str(profile), "--image", str(image), "--dry-run", "--soc-revision", "2.0"]
    )
    assert code == 0, err
    boot = imx_deploy / "imx-boot-imx95-19x19-verdin-sd.bin-flash_a55"
    assert f"uuu -b emmc_all {boot} {image}" in out.splitlines()
    assert "is for silicon B0" in out and "matches the boot container" in out
    assert f"sha256 {hashlib.sha256(image.read_bytes()).hexdigest()}" in err


def test_imx95_refuses_a_boot_container_for_other_silicon(tmp_path: Path, imx_deploy: Path) -> None:
    profile = board_profile("imx95-verdin", tmp_path)
    image = imx_deploy / "npu-image-imx95-19x19-verdin.rootfs.wic"
    for revision in ("1.0", "A1"):
        code, out, err = flash(
            ["--board", str(profile), "--image", str(image), "--dry-run", "--soc-revision", revision]
        )
        assert_one_sentence(code, err, "was built for B0", "IMX_SOC_REV")
        assert out == ""


def test_imx95_revision_from_saved_npu_info(tmp_path: Path, imx_deploy: Path) -> None:
    profile = board_profile("imx95-verdin", tmp_path)
    info = tmp_path / "info.json"
    info.write_text('{"schema": "npu-info/1", "soc": {"soc_id": "i.MX95", "revision": "1.1"}}')
    image = imx_deploy / "npu-image-imx95-19x19-verdin.rootfs.wic"
    code, _, err = flash(
        ["--board", str(profile), "--image", str(image), "--dry-run", "--npu-info", str(info)]
    )
    assert_one_sentence(code, err, "i.MX95 A1", "built for B0")


def test_imx95_unknown_container_revision_is_refused_when_the_board_is_known(
    tmp_path: Path, imx_deploy: Path
) -> None:
    shutil.rmtree(imx_deploy / "imx-boot-tools")
    profile = board_profile("imx95-verdin", tmp_path)
    image = imx_deploy / "npu-image-imx95-19x19-verdin.rootfs.wic"
    code, _, err = flash(
        ["--board", str(profile), "--image", str(image), "--dry-run", "--soc-revision", "2.0"]
    )
    assert_one_sentence(code, err, "Cannot tell which silicon revision", "imx-boot-tools")
    code, out, err = flash(["--board", str(profile), "--image", str(image), "--dry-run"])
    assert code == 0, err
    assert "board silicon revision unknown" in out


def test_imx95_real_uuu_finds_no_board(tmp_path: Path, imx_deploy: Path) -> None:
    """The real uuu runs `-lsusb`; with no board in serial download mode npu-flash stops."""
    assert shutil.which("uuu"), "uuu must be installed (.ci/apt-packages.txt)"
    profile = board_profile("imx95-verdin", tmp_path)
    image = imx_deploy / "npu-image-imx95-19x19-verdin.rootfs.wic"
    code, _, err = flash(["--board", str(profile), "--image", str(image)])
    assert_one_sentence(code, err, "No i.MX board in serial download mode")


def test_imx95_refuses_xz_and_a_device(tmp_path: Path, imx_deploy: Path) -> None:
    profile = board_profile("imx95-verdin", tmp_path)
    raw = imx_deploy / "npu-image-imx95-19x19-verdin.rootfs.wic"
    subprocess.run(["xz", "-k", "-0", str(raw)], check=True)
    code, _, err = flash(["--board", str(profile), "--image", f"{raw}.xz", "--dry-run"])
    assert_one_sentence(code, err, "uuu cannot read a xz image", "unxz")
    code, _, err = flash(["--board", str(profile), "--image", str(raw), "--dry-run", "--device", "/dev/null"])
    assert_one_sentence(code, err, "drop --device")


# ------------------------------------------------------------ Rockchip: rkdeveloptool


def _rockchip_deploy(tmp_path: Path, soc: str) -> Path:
    deploy = tmp_path / "deploy"
    deploy.mkdir()
    (deploy / f"{soc}_spl_loader_v1.05.108.bin").write_bytes(b"BOOT" + os.urandom(4000))
    (deploy / "loader.bin").symlink_to(f"{soc}_spl_loader_v1.05.108.bin")
    disk_image(deploy / "npu-image.wic")
    return deploy


@pytest.mark.parametrize("board,soc", [("rk3588-evb", "rk3588"), ("rk3576-evb", "rk3576")])
def test_rockchip_dry_run_prints_db_wl_rd(tmp_path: Path, board: str, soc: str) -> None:
    deploy = _rockchip_deploy(tmp_path, soc)
    profile = board_profile(board, tmp_path)
    image = deploy / "npu-image.wic"
    code, out, err = flash(["--board", str(profile), "--image", str(image), "--dry-run"])
    assert code == 0, err
    commands = [line for line in out.splitlines() if not line.startswith("#")]
    assert commands == [
        f"rkdeveloptool db {deploy / 'loader.bin'}",
        f"rkdeveloptool wl 0 {image}",
        "rkdeveloptool rd",
    ]


def test_rockchip_bad_loader_and_compressed_image(tmp_path: Path) -> None:
    deploy = _rockchip_deploy(tmp_path, "rk3588")
    data = yaml.safe_load(board_profile("rk3588-evb", tmp_path).read_text())
    data["flash"]["loader"] = "rk3588_spl_loader_v*.bin"  # a glob that matches two loaders
    profile = tmp_path / "rk3588-glob.yaml"
    profile.write_text(yaml.safe_dump(data))
    image = deploy / "npu-image.wic"
    (deploy / "rk3588_spl_loader_v1.06.bin").write_bytes(b"BOOT" + os.urandom(100))
    code, _, err = flash(["--board", str(profile), "--image", str(image), "--dry-run"])
    assert_one_sentence(code, err, "Several loaders match", "--loader")
    bogus = tmp_path / "bogus.bin"
    bogus.write_bytes(b"\x7fELF" + os.urandom(100))
    code, _, err = flash(
        ["--board", str(profile), "--image", str(image), "--dry-run", "--loader", str(bogus)]
    )
    assert_one_sentence(code, err, "is not a Rockchip loader")
    subprocess.run(["gzip", "-k", str(image)], check=True)
    code, _, err = flash(
        [
            "--board",
            str(profile),
            "--image",
            f"{image}.gz",
            "--dry-run",
            "--loader",
            str(deploy / "rk3588_spl_loader_v1.06.bin"),
        ]
    )
    assert_one_sentence(code, err, "rkdeveloptool cannot read a gz image", "gunzip")


def test_rockchip_real_rkdeveloptool_finds_no_board(tmp_path: Path) -> None:
    assert shutil.which("rkdeveloptool"), "rkdeveloptool must be installed (.ci/apt-packages.txt)"
    deploy = _rockchip_deploy(tmp_path, "rk3588")
    profile = board_profile("rk3588-evb", tmp_path)
    code, _, err = flash(["--board", str(profile), "--image", str(deploy / "npu-image.wic")])
    assert_one_sentence(code, err, "No Rockchip board in maskrom mode")


# ------------------------------------------------------------ bmaptool and device safety


@pytest.fixture
def loop_device(tmp_path: Path) -> Iterator[Path]:
    backing = tmp_path / "card.bin"
    with backing.open("wb") as handle:
        handle.truncate(16 * 1024 * 1024)
    device = Path(
        subprocess.run(
            ["losetup", "-f", "--show", str(backing)], capture_output=True, text=True, check=True
        ).stdout.strip()
    )
    try:
        yield device
    finally:
        subprocess.run(["losetup", "-d", str(device)], check=False)


def fake_sysfs(tmp_path: Path, device: Path, removable: str = "1") -> SystemView:
    """A sysfs tree holding this (real) loop device with a chosen `removable` attribute."""
    st = os.stat(device)
    major, minor = os.major(st.st_rdev), os.minor(st.st_rdev)
    root = tmp_path / "sys"
    node = root / "devices" / "virtual" / "block" / device.name
    (node / "holders").mkdir(parents=True)
    (node / "dev").write_text(f"{major}:{minor}\n")
    (node / "removable").write_text(f"{removable}\n")
    (node / "size").write_text(f"{16 * 2048}\n")
    (root / "dev" / "block").mkdir(parents=True)
    (root / "dev" / "block" / f"{major}:{minor}").symlink_to(node)
    return SystemView(sysfs=root)


def test_bmaptool_dry_run_creates_the_bmap_step(tmp_path: Path, loop_device: Path) -> None:
    image = disk_image(tmp_path / "npu-image-milkv-duo256m.rootfs.wic")
    profile = board_profile("milkv-duo256m", tmp_path)
    code, out, err = flash(
        ["--board", str(profile), "--image", str(image), "--device", str(loop_device), "--dry-run"],
        fake_sysfs(tmp_path, loop_device),
    )
    assert code == 0, err
    commands = [line for line in out.splitlines() if not line.startswith("#")]
    assert commands == [
        f"bmaptool create -o {image}.bmap {image}",
        f"bmaptool copy --bmap {image}.bmap {image} {loop_device}",
    ]
    assert not Path(f"{image}.bmap").exists(), "a dry run writes nothing"


def test_bmaptool_real_copy_onto_a_loop_device_reads_back(tmp_path: Path, loop_device: Path) -> None:
    image = disk_image(tmp_path / "npu-image-generic.rootfs.wic", seed=7)
    Path(f"{image}.sha256").write_text(f"{hashlib.sha256(image.read_bytes()).hexdigest()}  {image.name}\n")
    profile = board_profile("generic-cpu", tmp_path)
    code, _, err = flash(
        ["--board", str(profile), "--image", str(image), "--device", str(loop_device)],
        fake_sysfs(tmp_path, loop_device),
    )
    assert code == 0, err
    assert "sha256 matches" in err and "all mapped ranges match the bmap" in err
    assert Path(f"{image}.bmap").is_file(), "the missing bmap was created"
    written = image.read_bytes()
    with open(loop_device, "rb") as handle:
        os.posix_fadvise(handle.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
        assert handle.read(len(written)) == written


def test_bmaptool_compressed_image_with_oe_core_bmap(tmp_path: Path, loop_device: Path) -> None:
    raw = disk_image(tmp_path / "npu-image-rock-5b.rootfs.wic", seed=3)
    subprocess.run(["bmaptool", "create", "-o", f"{raw}.bmap", str(raw)], check=True)
    subprocess.run(["zstd", "-q", "--rm", str(raw)], check=True)
    image = Path(f"{raw}.zst")
    profile = board_profile("rock-5b", tmp_path)
    code, _, err = flash(
        ["--board", str(profile), "--image", str(image), "--device", str(loop_device)],
        fake_sysfs(tmp_path, loop_device),
    )
    assert code == 0, err
    expected = subprocess.run(["zstd", "-dc", str(image)], capture_output=True, check=True).stdout
    with open(loop_device, "rb") as handle:
        os.posix_fadvise(handle.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
        assert handle.read(len(expected)) == expected


def test_checksum_mismatch_stops_before_writing(tmp_path: Path, loop_device: Path) -> None:
    image = disk_image(tmp_path / "img.wic")
    Path(f"{image}.sha256").write_text("0" * 64 + "\n")
    profile = board_profile("generic-cpu", tmp_path)
    code, _, err = flash(
        ["--board", str(profile), "--image", str(image), "--device", str(loop_device)],
        fake_sysfs(tmp_path, loop_device),
    )
    assert_one_sentence(code, err, "does not match its checksum file")
    with open(loop_device, "rb") as handle:
        assert handle.read(1024 * 1024) == bytes(1024 * 1024), "nothing was written"


def test_real_sysfs_loop_device_is_not_removable_unless_forced_twice(
    tmp_path: Path, loop_device: Path
) -> None:
    image = disk_image(tmp_path / "img.wic")
    profile = board_profile("generic-cpu", tmp_path)
    base = ["--board", str(profile), "--image", str(image), "--device", str(loop_device), "--dry-run"]
    code, _, err = flash(base)
    assert_one_sentence(code, err, "is not removable", f"--force {loop_device}")
    code, _, err = flash(base + ["--force", "/dev/sdz"])
    assert_one_sentence(code, err, "--force names /dev/sdz")
    code, out, err = flash(base + ["--force", str(loop_device)])
    assert code == 0, err
    assert "forced: not marked removable" in out


def test_mounted_device_and_running_system_are_refused(tmp_path: Path, loop_device: Path) -> None:
    subprocess.run(["mkfs.ext4", "-q", "-F", str(loop_device)], check=True)
    mountpoint = tmp_path / "mnt"
    mountpoint.mkdir()
    image = disk_image(tmp_path / "img.wic")
    profile = board_profile("generic-cpu", tmp_path)
    argv = ["--board", str(profile), "--image", str(image), "--device", str(loop_device), "--dry-run"]
    view = fake_sysfs(tmp_path, loop_device)
    subprocess.run(["mount", str(loop_device), str(mountpoint)], check=True)
    try:
        code, _, err = flash(argv, view)
        assert_one_sentence(code, err, "is mounted", f"umount {mountpoint}")
        code, _, err = flash(argv + ["--force", str(loop_device)], view)
        assert_one_sentence(code, err, "is mounted")
        as_root = SystemView(sysfs=view.sysfs, system_paths=(mountpoint,))
        code, _, err = flash(argv + ["--force", str(loop_device)], as_root)
        assert_one_sentence(code, err, "holds the running system")
    finally:
        subprocess.run(["umount", str(mountpoint)], check=False)
    code, _, err = flash(argv, view)
    assert code == 0, err


def test_busy_device_is_refused(tmp_path: Path, loop_device: Path) -> None:
    image = disk_image(tmp_path / "img.wic")
    profile = board_profile("generic-cpu", tmp_path)
    holder = os.open(loop_device, os.O_RDONLY | os.O_EXCL)
    try:
        code, _, err = flash(
            ["--board", str(profile), "--image", str(image), "--device", str(loop_device), "--dry-run"],
            fake_sysfs(tmp_path, loop_device),
        )
        assert_one_sentence(code, err, "is busy")
    finally:
        os.close(holder)


def test_device_open_in_another_process_is_refused(tmp_path: Path, loop_device: Path) -> None:
    """A plain open (no O_EXCL, no mount) is invisible to the busy check: /proc/*/fd shows it."""
    image = disk_image(tmp_path / "img.wic")
    profile = board_profile("generic-cpu", tmp_path)
    with loop_device.open("rb") as card:
        holder = subprocess.Popen(["sleep", "60"], stdin=card)
    try:
        code, _, err = flash(
            ["--board", str(profile), "--image", str(image), "--device", str(loop_device), "--dry-run"],
            fake_sysfs(tmp_path, loop_device),
        )
        assert_one_sentence(code, err, f"is open in sleep (PID {holder.pid})", "fuser -v")
    finally:
        holder.kill()
        holder.wait()


@pytest.mark.parametrize("taker", ["open", "mount"])
def test_device_taken_while_the_image_is_hashed_is_refused_before_writing(
    tmp_path: Path, loop_device: Path, monkeypatch: pytest.MonkeyPatch, taker: str
) -> None:
    image = disk_image(tmp_path / "img.wic")
    profile = board_profile("generic-cpu", tmp_path)
    if taker == "mount":
        subprocess.run(["mkfs.ext4", "-q", "-F", str(loop_device)], check=True)
    before = hashlib.sha256(loop_device.read_bytes()).hexdigest()
    mountpoint = tmp_path / "mnt"
    mountpoint.mkdir()
    holders: list[subprocess.Popen[bytes]] = []
    real_verify = cli.verify_image

    def verify_then_take(path: Path, stream: io.TextIOBase) -> None:
        real_verify(path, stream)  # the minutes of hashing, during which the card is taken
        if taker == "open":
            with loop_device.open("rb") as card:
                holders.append(subprocess.Popen(["sleep", "60"], stdin=card))
        else:
            subprocess.run(["mount", str(loop_device), str(mountpoint)], check=True)

    monkeypatch.setattr(cli, "verify_image", verify_then_take)
    try:
        code, _, err = flash(
            ["--board", str(profile), "--image", str(image), "--device", str(loop_device)],
            fake_sysfs(tmp_path, loop_device),
        )
        assert_one_sentence(code, err, "is open in sleep" if taker == "open" else "is mounted")
        assert "bmaptool" not in err  # nothing was run, let alone written
    finally:
        for holder in holders:
            holder.kill()
            holder.wait()
        subprocess.run(["umount", str(mountpoint)], check=False, capture_output=True)
    if taker == "open":
        assert hashlib.sha256(loop_device.read_bytes()).hexdigest() == before
    else:  # mounting wrote the superblock itself; the image's data must not be there
        region = slice(1 << 20, (1 << 20) + 70000)
        assert loop_device.read_bytes()[region] != image.read_bytes()[region]


def test_partition_and_non_block_device_are_refused(tmp_path: Path, loop_device: Path) -> None:
    """Loop partition scanning is not available in every sandbox, so sysfs says the (real) loop
    device is partition 1 of a disk, the way /sys/dev/block/M:m of /dev/sdb1 looks."""
    image = disk_image(tmp_path / "img.wic")
    profile = board_profile("generic-cpu", tmp_path)
    st = os.stat(loop_device)
    root = tmp_path / "sys"
    disk = root / "devices" / "pci0000:00" / "usb1" / "block" / "sdz"
    part = disk / "sdz1"
    part.mkdir(parents=True)
    (disk / "dev").write_text("8:240\n")
    (disk / "removable").write_text("1\n")
    (part / "dev").write_text(f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}\n")
    (part / "partition").write_text("1\n")
    (root / "dev" / "block").mkdir(parents=True)
    (root / "dev" / "block" / f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}").symlink_to(part)
    argv = ["--board", str(profile), "--image", str(image), "--dry-run", "--device"]
    code, _, err = flash(argv + [str(loop_device)], SystemView(sysfs=root))
    assert_one_sentence(code, err, "is a partition of /dev/sdz", "--device /dev/sdz")
    code, _, err = flash(argv + [str(image)])
    assert_one_sentence(code, err, "is not a block device")


def test_bmaptool_never_guesses_a_device(tmp_path: Path) -> None:
    image = disk_image(tmp_path / "img.wic")
    profile = board_profile("generic-cpu", tmp_path)
    code, _, err = flash(["--board", str(profile), "--image", str(image), "--dry-run"])
    assert_one_sentence(code, err, "needs the card's device", "never guesses")


def test_missing_bmaptool_is_one_sentence(
    tmp_path: Path, loop_device: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    image = disk_image(tmp_path / "img.wic")
    profile = board_profile("generic-cpu", tmp_path)
    empty = tmp_path / "empty-path"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    code, _, err = flash(
        ["--board", str(profile), "--image", str(image), "--device", str(loop_device)],
        fake_sysfs(tmp_path, loop_device),
    )
    assert_one_sentence(code, err, "bmaptool is not installed", "apt-get install bmap-tools")


# ------------------------------------------------------------ bad input, through the real command


def run_script(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(REPO / "scripts" / "npu-flash"), *argv], capture_output=True, text=True, check=False, timeout=120
    )


def test_bad_inputs_exit_nonzero_with_one_sentence(tmp_path: Path) -> None:
    profile = board_profile("generic-cpu", tmp_path)
    text = tmp_path / "notes.wic"
    text.write_text("this is not a disk image\n" * 100)
    named_gz = tmp_path / "fake.wic.gz"
    named_gz.write_bytes(b"\x00" * 4096)
    tarball = tmp_path / "rootfs.tar"
    subprocess.run(["tar", "-cf", str(tarball), "-C", str(tmp_path), "notes.wic"], check=True)
    good = disk_image(tmp_path / "good.wic")
    no_flash = tmp_path / "noflash.yaml"
    no_flash.write_text(yaml.safe_dump(_base_profile("noflash", "none")))
    cases = [
        (["--board", str(profile), "--image", str(tmp_path / "missing.wic")], "does not exist"),
        (["--board", str(profile), "--image", str(text)], "has no partition table"),
        (["--board", str(profile), "--image", str(named_gz)], "is named .gz but is not compressed"),
        (["--board", str(profile), "--image", str(tarball)], "root filesystem tarball"),
        (["--board", "no-such-board", "--image", str(text)], "Unknown board profile 'no-such-board'"),
        (["--board", str(no_flash), "--image", str(text)], "has no 'flash:' section"),
        (
            ["--board", str(profile), "--image", str(good), "--device", "/dev/does-not-exist"],
            "Device /dev/does-not-exist does not exist",
        ),
    ]
    for argv, fragment in cases:
        result = run_script(*argv, "--dry-run")
        assert result.returncode == 1, (argv, result.stderr)
        assert "Traceback" not in result.stderr
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and fragment in lines[0], (argv, result.stderr)
    usage = run_script("--image", str(text))
    assert usage.returncode == 2 and "--board" in usage.stderr


def test_read_back_catches_a_card_that_dropped_a_write(tmp_path: Path, loop_device: Path) -> None:
    from npu_accept.flash.bmaptool import verify_device
    from npu_accept.flash.errors import FlashError

    image = disk_image(tmp_path / "img.wic", seed=11)
    subprocess.run(["bmaptool", "create", "-o", f"{image}.bmap", str(image)], check=True)
    subprocess.run(
        ["bmaptool", "-q", "copy", "--bmap", f"{image}.bmap", str(image), str(loop_device)], check=True
    )
    assert verify_device(Path(f"{image}.bmap"), loop_device, io.StringIO()) > 0
    with open(loop_device, "r+b") as handle:  # one lost sector in the data of the first partition
        handle.seek(1024 * 1024 + 4096)
        handle.write(bytes(512))
        handle.flush()
        os.fsync(handle.fileno())
    with pytest.raises(FlashError, match="reads back wrong data"):
        verify_device(Path(f"{image}.bmap"), loop_device, io.StringIO())


def installed_npu_tools() -> dict[str, TwinFile]:
    """The npu-tools package's files where its recipe installs them (npu-tools_*.bb do_install).

    Copied into the twin rather than linked: the twin's /tmp is its own, and CI may clone the
    repository anywhere."""
    files = REPO / "meta-npu" / "recipes-tools" / "npu-tools" / "files"
    installed = {
        f"/usr/bin/{tool}": TwinFile((files / tool).read_bytes(), 0o755) for tool in ("npu-info", "npu-run")
    }
    for source in sorted((files / "npu_target").rglob("*.py")):
        board_path = "/usr/share/npu-tools/" + source.relative_to(files).as_posix()
        installed[board_path] = TwinFile(source.read_bytes())
    return installed


def test_imx95_revision_read_from_a_running_board(twin_factory, tmp_path: Path, imx_deploy: Path) -> None:
    """--target runs the board's own npu-info (installed as the recipe does) over real SSH: an A0
    twin is refused for the B0 boot container, a B0 twin passes."""
    from dataclasses import replace

    from npu_accept.sim.imx95 import FAULTS, HEALTHY, imx95_assets, imx95_spec

    assets = imx95_assets(tmp_path / "assets")
    profile = board_profile("imx95-verdin", tmp_path)
    image = imx_deploy / "npu-image-imx95-19x19-verdin.rootfs.wic"
    for board, expected in ((FAULTS["a0"][0], "i.MX95 A0"), (HEALTHY, None)):
        spec = imx95_spec(board, assets)
        twin = twin_factory(replace(spec, files={**spec.files, **installed_npu_tools()}))
        argv = [
            "--board",
            str(profile),
            "--image",
            str(image),
            "--dry-run",
            "--target",
            twin.target,
            "--identity",
            str(twin.identity),
            "--known-hosts",
            str(twin.known_hosts),
        ]
        code, out, err = flash(argv)
        if expected:
            assert_one_sentence(code, err, expected, "built for B0")
        else:
            assert code == 0, err
            assert "board silicon B0 matches the boot container" in out
    code, _, err = flash(["--board", str(profile), "--image", str(image), "--dry-run", "--target", "nouser"])
    assert_one_sentence(code, err, "has no user")


def test_bmaptool_compressed_image_without_bmap_is_read_back_whole(tmp_path: Path, loop_device: Path) -> None:
    raw = disk_image(tmp_path / "npu-image-generic.rootfs.wic", seed=5)
    expected = raw.read_bytes()
    subprocess.run(["gzip", str(raw)], check=True)
    image = Path(f"{raw}.gz")
    profile = board_profile("generic-cpu", tmp_path)
    code, out, err = flash(
        ["--board", str(profile), "--image", str(image), "--device", str(loop_device)],
        fake_sysfs(tmp_path, loop_device),
    )
    assert code == 0, err
    assert f"read back {len(expected)} bytes" in err and "the whole image matches" in err
    with open(loop_device, "rb") as handle:
        assert handle.read(len(expected)) == expected


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_draws_on_a_terminal_and_logs_one_line_otherwise(tmp_path: Path) -> None:
    from npu_accept.flash.checksum import sha256_file

    image = tmp_path / "big.bin"
    image.write_bytes(os.urandom(9 * 1024 * 1024))
    terminal, log = _Terminal(), io.StringIO()
    digest = sha256_file(image, terminal)
    assert digest == sha256_file(image, log) == hashlib.sha256(image.read_bytes()).hexdigest()
    assert "\r" in terminal.getvalue() and "100.0%" in terminal.getvalue()
    assert "\r" not in log.getvalue() and log.getvalue().count("\n") == 1
    assert log.getvalue().startswith("sha256 big.bin: 9.0 MiB in ")

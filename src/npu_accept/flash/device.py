# SPDX-License-Identifier: MIT
"""Block-device safety: never write to a mounted disk, the running system or an internal disk.

Everything is read from sysfs and the mount table through a `SystemView`, so tests can point
the checks at a faked sysfs tree while the device itself stays a real (loop) block device.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from npu_accept.flash.errors import FlashError


@dataclass(frozen=True)
class SystemView:
    """Where the safety checks look; the defaults are the running system."""

    sysfs: Path = Path("/sys")
    mounts: Path = Path("/proc/self/mounts")
    swaps: Path = Path("/proc/swaps")
    system_paths: tuple[Path, ...] = (Path("/"), Path("/boot"), Path("/boot/efi"))
    proc: Path = Path("/proc")


@dataclass(frozen=True)
class BlockDevice:
    path: Path
    name: str  # kernel name, e.g. sdb, mmcblk0, loop3
    devno: tuple[int, int]  # major, minor of the whole disk
    partitions: tuple[tuple[int, int], ...] = field(default=())
    removable: bool | None = None  # None when sysfs does not say
    size_bytes: int | None = None

    @property
    def devnos(self) -> set[tuple[int, int]]:
        return {self.devno, *self.partitions}


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None


def _devno(text: str | None) -> tuple[int, int] | None:
    if not text or ":" not in text:
        return None
    major, minor = text.split(":", 1)
    try:
        return int(major), int(minor)
    except ValueError:
        return None


def _sysfs_node(view: SystemView, devno: tuple[int, int]) -> Path | None:
    link = view.sysfs / "dev" / "block" / f"{devno[0]}:{devno[1]}"
    return link.resolve() if link.exists() else None


def describe(device: Path, view: SystemView) -> BlockDevice:
    """The whole disk behind `device`, or FlashError when it is not one."""
    try:
        st = os.stat(device)
    except FileNotFoundError:
        raise FlashError(
            f"Device {device} does not exist; plug the card in and find its name with "
            "`lsblk -d -o NAME,SIZE,RM,TRAN,MODEL`."
        ) from None
    except OSError as exc:
        raise FlashError(
            f"Device {device} cannot be examined ({exc.strerror}); run npu-flash as root."
        ) from None
    if not stat.S_ISBLK(st.st_mode):
        raise FlashError(
            f"{device} is not a block device; give the whole disk, e.g. /dev/sdX or "
            "/dev/mmcblkN (see `lsblk -d`)."
        )
    devno = (os.major(st.st_rdev), os.minor(st.st_rdev))
    node = _sysfs_node(view, devno)
    if node is None:
        raise FlashError(
            f"Device {device} ({devno[0]}:{devno[1]}) is unknown to sysfs at {view.sysfs}; "
            "check that it is still attached (`lsblk`)."
        )
    if (node / "partition").exists():
        parent = node.parent.name
        raise FlashError(
            f"{device} is a partition of /dev/{parent}; give the whole disk: --device /dev/{parent}."
        )
    partitions = []
    for child in sorted(node.iterdir()):
        if (child / "partition").exists():
            number = _devno(_read(child / "dev"))
            if number:
                partitions.append(number)
    removable_text = _read(node / "removable")
    size_sectors = _read(node / "size")
    return BlockDevice(
        path=device,
        name=node.name,
        devno=devno,
        partitions=tuple(partitions),
        removable=None if removable_text is None else removable_text == "1",
        size_bytes=int(size_sectors) * 512 if size_sectors and size_sectors.isdigit() else None,
    )


def _whole_disks_of(devno: tuple[int, int], view: SystemView) -> set[tuple[int, int]]:
    """The disk(s) that hold a filesystem's device: the parent of a partition, the slaves of dm/md."""
    node = _sysfs_node(view, devno)
    if node is None:
        return {devno}
    found: set[tuple[int, int]] = set()
    if (node / "partition").exists():
        parent = _devno(_read(node.parent / "dev"))
        found.add(parent or devno)
    else:
        found.add(devno)
    slaves = node / "slaves"
    if slaves.is_dir():
        for slave in slaves.iterdir():
            number = _devno(_read(slave / "dev"))
            if number:
                found |= _whole_disks_of(number, view)
    return found


def _mount_table(path: Path) -> list[tuple[str, str]]:
    text = _read(path) or ""
    table = []
    for line in text.splitlines():
        fields = line.split()
        if len(fields) >= 2:
            table.append((fields[0], fields[1].replace("\\040", " ")))
    return table


def _rdev(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISBLK(st.st_mode):
        return None
    return os.major(st.st_rdev), os.minor(st.st_rdev)


def check_device(device: Path, view: SystemView | None = None, force: Path | None = None) -> BlockDevice:
    """Refuse a disk that holds the running system, is mounted, busy or open in another process,
    or is not removable. npu-flash calls it before hashing the image and again right before
    writing (hashing can take minutes, in which a desktop may have mounted the card).

    `force` must name the same disk again; it only lifts the "not removable" refusal — a
    mounted disk is unmounted in one command, and the disk the host runs from is never a target.
    """
    view = view or SystemView()
    if force is not None and os.path.realpath(force) != os.path.realpath(device):
        raise FlashError(
            f"--force names {force} but --device is {device}; repeat the same disk: "
            f"--device {device} --force {device}."
        )
    disk = describe(device, view)
    mine = disk.devnos

    for system_path in view.system_paths:
        try:
            st = os.stat(system_path)
        except OSError:
            continue
        fs_dev = (os.major(st.st_dev), os.minor(st.st_dev))
        if _whole_disks_of(fs_dev, view) & mine:
            raise FlashError(
                f"{device} holds the running system ({system_path} lives on it); "
                "npu-flash never writes to it, pick the card or USB disk instead."
            )

    for source, target in _mount_table(view.mounts):
        number = _rdev(source) if source.startswith("/") else None
        if number is not None and number in mine:
            raise FlashError(f"{device} is mounted ({source} on {target}); unmount it first: umount {target}")
    for line in (_read(view.swaps) or "").splitlines()[1:]:
        swap = line.split()[0] if line.split() else ""
        number = _rdev(swap) if swap else None
        if number is not None and number in mine:
            raise FlashError(f"{device} is in use as swap ({swap}); run swapoff {swap} first.")

    node = _sysfs_node(view, disk.devno)
    holders = node / "holders" if node else None
    if holders is not None and holders.is_dir() and any(holders.iterdir()):
        users = ", ".join(sorted(h.name for h in holders.iterdir()))
        raise FlashError(f"{device} is held by {users} (device-mapper, RAID or LVM); release it first.")
    _require_no_open_file(device, disk, view)
    _require_exclusive(device)

    if disk.removable is not True and force is None:
        said = (
            "does not say it is removable"
            if disk.removable is None
            else "is not removable (sysfs removable=0)"
        )
        raise FlashError(
            f"{device} {said}, so it may be an internal disk; if you are sure it is the "
            f"card, name it twice: --device {device} --force {device}."
        )
    return disk


def processes_holding(disk: BlockDevice, view: SystemView) -> list[tuple[int, str]]:
    """(PID, command name) of every other process with the disk or one of its partitions open,
    found as `fuser` finds them: through each process's /proc/PID/fd links.

    O_EXCL only sees claims (mounts, holders, O_EXCL opens); a dd, a udisks helper or a shell
    redirection that opened the card plainly would go on writing beside us. Processes whose fd
    directory cannot be read (another user's, without root) are not seen.
    """
    mine = disk.devnos
    found = []
    for entry in sorted(view.proc.iterdir(), key=lambda p: p.name):
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            links = list((entry / "fd").iterdir())
        except OSError:
            continue
        for link in links:
            try:
                st = os.stat(link)
            except OSError:
                continue
            if stat.S_ISBLK(st.st_mode) and (os.major(st.st_rdev), os.minor(st.st_rdev)) in mine:
                found.append((int(entry.name), _read(entry / "comm") or "?"))
                break
    return found


def _require_no_open_file(device: Path, disk: BlockDevice, view: SystemView) -> None:
    holders = processes_holding(disk, view)
    if holders:
        names = ", ".join(f"{comm} (PID {pid})" for pid, comm in holders[:5])
        more = f" and {len(holders) - 5} more" if len(holders) > 5 else ""
        raise FlashError(
            f"{device} is open in {names}{more}; close those programs (`fuser -v {device}` lists "
            "them), then try again."
        )


def _require_exclusive(device: Path) -> None:
    """O_EXCL on a block device fails with EBUSY while anything (a mount, a holder) claims it."""
    try:
        fd = os.open(device, os.O_RDONLY | os.O_EXCL)
    except OSError as exc:
        if exc.errno == errno.EBUSY:
            raise FlashError(
                f"{device} is busy (claimed by a mount, a swap or another program); free it, then try again."
            ) from None
        if exc.errno in (errno.EACCES, errno.EPERM):
            raise FlashError(
                f"{device} cannot be opened ({exc.strerror}); run npu-flash as root "
                "or add yourself to the disk group."
            ) from None
        raise FlashError(
            f"{device} cannot be opened ({exc.strerror}); check that it is still attached."
        ) from None
    os.close(fd)

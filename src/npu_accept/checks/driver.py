# SPDX-License-Identifier: MIT
"""Check 1 — driver: present (device node, module), version read from the right place, at least
the profile minimum, equal to the build manifest; for Neutron also the firmware running."""

from __future__ import annotations

from npu_target.families import family

from npu_accept.checks.base import CheckResult, failed, passed, same_version, skipped, version_at_least
from npu_accept.facts import BoardFacts
from npu_accept.profile import Profile

CHECK = "driver"


def check_driver(facts: BoardFacts, profile: Profile) -> CheckResult:
    """Family-independent driver check over the npu-info facts."""
    spec = profile.driver
    if spec is None:
        return skipped(CHECK, f"Profile {profile.name} expects no NPU driver.")
    if facts.info is None:
        return failed(CHECK, f"npu-info could not run on the board: {facts.info_error}", "tools")
    driver = facts.info_section("driver")
    name = driver.get("name") or spec.name
    devices = set(driver.get("devices") or [])
    if not driver.get("module_loaded") and not devices:
        return failed(
            CHECK,
            f"The {spec.name} NPU driver is not present: no device node and no loaded module; "
            f"enable it in the kernel ({_kernel_hint(profile)}) and boot that kernel.",
            "driver-missing",
        )
    missing = [d for d in spec.devices if d not in devices]
    if missing:
        return failed(
            CHECK,
            f"Device node {missing[0]} of the {spec.name} driver is missing; check that the "
            "driver probed (dmesg) and the device-tree node is enabled.",
            "driver-missing",
        )
    version = driver.get("version")
    source = driver.get("version_source") or "the driver"
    if not version:
        return failed(
            CHECK,
            f"The {name} driver version could not be read ({_first_error(facts)}); "
            "the kernel must expose the driver version.",
            "driver-version",
        )
    if spec.min_version:
        at_least = version_at_least(str(version), spec.min_version)
        if at_least is False:
            return failed(
                CHECK,
                f"The {name} driver version {version} (from {source}) is older than the "
                f"profile minimum {spec.min_version}; update the kernel to one with a newer driver.",
                "driver-old",
                version=version,
            )
        if at_least is None:
            return failed(
                CHECK,
                f"The {name} driver version '{version}' (from {source}) is not a version "
                "number; the driver reports an unexpected string.",
                "driver-version",
            )
    firmware = driver.get("firmware") or {}
    if spec.firmware:
        if not firmware.get("present"):
            return failed(
                CHECK,
                f"NPU firmware {spec.firmware} is missing from /lib/firmware; install the "
                "firmware package of the NPU runtime.",
                "firmware",
            )
        if firmware.get("state") not in (None, "running"):
            return failed(
                CHECK,
                f"NPU firmware {spec.firmware} is not running (remoteproc state "
                f"'{firmware.get('state')}'); check dmesg for the remoteproc boot error.",
                "firmware",
            )
    if spec.match_manifest:
        manifest = (facts.info or {}).get("manifest")
        if not isinstance(manifest, dict):
            return failed(
                CHECK,
                "The build manifest /usr/share/meta-npu/build-manifest.json is missing on the "
                "board; build the image with meta-npu's npu-image so the suite can compare "
                "against it.",
                "manifest",
            )
        if manifest.get("npu_family") not in (None, profile.family):
            return failed(
                CHECK,
                f"The build manifest says NPU family {manifest.get('npu_family')} but profile "
                f"{profile.name} is for {profile.family}; flash the image built for this board.",
                "manifest",
            )
        kernel_said = _against_built_kernel(facts, manifest, name)
        if isinstance(kernel_said, CheckResult):
            return kernel_said
        if kernel_said is not None:
            return _loaded(name, version, source, devices, spec.firmware, kernel_said)
        built = (manifest.get("driver") or {}).get("version")
        if not built:
            return failed(
                CHECK,
                "The build manifest records no driver version; rebuild the image with "
                "meta-npu's npu-manifest class.",
                "manifest",
            )
        if not same_version(str(built), str(version)):
            return failed(
                CHECK,
                f"The running {name} driver is version {version} but the build manifest "
                f"records {built}; the board runs a kernel other than the image built — reflash it.",
                "manifest",
                version=version,
                manifest_version=built,
            )
    said = ", as in the build manifest" if spec.match_manifest else ""
    return _loaded(name, version, source, devices, spec.firmware, said)


def _loaded(
    name: str, version: object, source: str, devices: set[str], firmware: str | None, said: str
) -> CheckResult:
    """The pass sentence; `said` is what the manifest comparison adds to it ("" without one)."""
    return passed(
        CHECK,
        f"{name} driver {version} (from {source}) is loaded"
        + (f" with {', '.join(sorted(devices))}" if devices else "")
        + (", firmware running" if firmware else "")
        + said
        + ".",
        version=version,
        source=source,
    )


def _against_built_kernel(
    facts: BoardFacts, manifest: dict[str, object], name: str
) -> CheckResult | str | None:
    """Where the driver is part of the kernel and the manifest records no version of its own (its
    driver record is the kernel's record: RKNPU in the vendor kernel, Rocket in mainline), the
    driver's version (0.9.8) cannot be compared with a kernel recipe's (6.1.99): the running kernel
    is compared with the kernel the image built instead. None where the manifest has a driver
    version of its own; a failed result, or the words for the pass sentence."""
    driver, kernel = manifest.get("driver"), manifest.get("kernel")
    if not isinstance(driver, dict) or not isinstance(kernel, dict):
        return None
    built = str(kernel.get("version") or "")
    if not built or driver.get("recipe") != kernel.get("recipe") or str(driver.get("version") or "") != built:
        return None
    running = str((facts.info or {}).get("kernel") or "").strip()
    if not running:
        return failed(
            CHECK,
            f"The build manifest records the {name} driver as part of kernel {built}, but the running "
            "kernel's release could not be read (/proc/sys/kernel/osrelease); mount procfs.",
            "manifest",
        )
    release = running.split("-", 1)[0].split("+", 1)[0]
    if not same_version(release, built):
        return failed(
            CHECK,
            f"The board runs kernel {running} but the build manifest records kernel {built}, which the "
            f"{name} driver is part of; the board runs a kernel other than the image built — reflash it.",
            "manifest",
            manifest_version=built,
        )
    return f", as in the build manifest (part of kernel {built})"


def _kernel_hint(profile: Profile) -> str:
    described = family(profile.family)
    return described.kernel_config if described else "the NPU driver"


def _first_error(facts: BoardFacts) -> str:
    errors = (facts.info or {}).get("errors") or []
    return str(errors[0]).rstrip(".") if errors else "npu-info reported no version"


IMPLEMENTS = {(CHECK, "*"): check_driver}

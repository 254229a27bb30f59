# SPDX-License-Identifier: MIT
"""NXP i.MX95 Neutron NPU: driver (staging/neutron), remoteproc firmware, delegate, DMA pool.

Facts and where they come from (docs/design.md, issue 3 check 1): MODULE_VERSION in
/sys/module/neutron/version (fallback `modinfo -F version neutron`), /dev/neutron*, the
remoteproc that runs NeutronFirmware.elf (/sys/class/remoteproc/*/{name,firmware,state}),
reserved-memory pools from the device tree, /usr/lib/libneutron_delegate.so.
"""

from __future__ import annotations

import re

from . import FamilyFacts
from .common import ProbeContext, dt_compatibles, module_present, remoteprocs, reserved_memory_pools

DRIVER = "neutron"  # named by npu-info when no NPU is found
BACKENDS = {"tflite-delegate": "backends.tflite"}  # npu-run backend -> module

MODULE = "neutron"
COMPATIBLES = ("fsl,imx95-neutron", "nxp,imx95-neutron")
DELEGATE_PATH = "/usr/lib/libneutron_delegate.so"
# meta-imx's neutron recipe copies nxp-imx/neutron's <target>/library/* to ${libdir}; releases ship
# libNeutronDriver either as a shared library or only as a static one linked into the delegate.
RUNTIME_PATHS = ("/usr/lib/libNeutronDriver.so", "/lib/libNeutronDriver.so")
FIRMWARE_DIR = "/lib/firmware"
POOL_NAME = re.compile(r"neutron|npu", re.IGNORECASE)
DMESG_LINES_KEPT = 20


def _devices(ctx: ProbeContext) -> list[str]:
    return [f"/dev/{name}" for name in ctx.listdir("/dev") if re.fullmatch(r"neutron\d+", name)]


def detect(ctx: ProbeContext) -> bool:
    if _devices(ctx) or module_present(ctx, MODULE):
        return True
    return any(c in dt_compatibles(ctx) for c in COMPATIBLES)


def _version(ctx: ProbeContext, errors: list[str]) -> tuple[str | None, str | None]:
    version = ctx.read_text(f"/sys/module/{MODULE}/version")
    if version:
        return version, f"/sys/module/{MODULE}/version"
    code, out, _err = ctx.run(["modinfo", "-F", "version", MODULE])
    if code == 0 and out.strip():
        return out.strip(), "modinfo"
    errors.append(
        f"the neutron driver version is unknown (no /sys/module/{MODULE}/version and modinfo "
        "gave none); load the neutron module or build it into the kernel (CONFIG_NEUTRON)."
    )
    return None, None


def _firmware(ctx: ProbeContext, errors: list[str]) -> dict[str, object] | None:
    for proc in remoteprocs(ctx):
        name = (proc["name"] or "") + " " + (proc["firmware"] or "")
        if "neutron" not in name.lower():
            continue
        fw = proc["firmware"]
        path = f"{FIRMWARE_DIR}/{fw}" if fw else None
        present = bool(path and ctx.exists(path))
        if fw and not present:
            errors.append(f"Neutron firmware {path} is missing; install the neutron package's firmware.")
        if proc["state"] != "running":
            errors.append(
                f"the Neutron remoteproc {proc['id']} is '{proc['state']}', not 'running'; "
                "check dmesg for the firmware load error."
            )
        return {
            "name": fw,
            "path": path,
            "present": present,
            "state": proc["state"],
            "remoteproc": proc["id"],
        }
    errors.append(
        "no Neutron remoteproc in /sys/class/remoteproc; enable CONFIG_IMX_NEUTRON_REMOTEPROC "
        "and the neutron remoteproc device-tree node."
    )
    return None


def _runtime(ctx: ProbeContext) -> dict[str, object] | None:
    for path in RUNTIME_PATHS:
        if ctx.exists(path):
            return {"name": "libNeutronDriver", "path": path, "version": None}
    return None


def probe(ctx: ProbeContext) -> FamilyFacts:
    errors: list[str] = []
    version, source = _version(ctx, errors)
    devices = _devices(ctx)
    if not devices:
        errors.append("no /dev/neutron* device node; the neutron driver did not probe (see dmesg).")
    driver = {
        "name": MODULE,
        "version": version,
        "version_source": source,
        "module_loaded": module_present(ctx, MODULE),
        "devices": devices,
        "firmware": _firmware(ctx, errors),
        "dmesg": [line for line in ctx.dmesg() if "neutron" in line.lower()][-DMESG_LINES_KEPT:],
    }
    dmesg_error = ctx.dmesg_error()
    if dmesg_error:
        errors.append(dmesg_error)
    delegate_present = ctx.exists(DELEGATE_PATH)
    if not delegate_present:
        errors.append(
            f"the Neutron delegate {DELEGATE_PATH} is missing; install tensorflow-lite-neutron-delegate."
        )
    pools = reserved_memory_pools(ctx)
    for pool in pools:
        pool["npu"] = bool(POOL_NAME.search(pool["name"]))
    if not any(pool["npu"] for pool in pools):
        errors.append(
            "no reserved-memory pool for the NPU (name containing 'neutron' or 'npu') in the "
            "device tree; apply the board's -neutron device-tree overlay."
        )
    return FamilyFacts(
        driver=driver,
        runtime=_runtime(ctx),
        daemon=None,
        delegate={"path": DELEGATE_PATH, "present": delegate_present},
        memory={"sram": None, "pools": pools, "ion": None},
        load=None,
        errors=errors,
    )

# SPDX-License-Identifier: MIT
"""npu-info: probe the NPU stack of this board and print the npu-info/1 JSON (docs/npu-run.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from . import TOOL_VERSION
from .cli import EXIT_FAILED, EXIT_OK, SentenceParser, emit, fail_usage
from .errors import UsageError
from .probes import FAMILY_MODULES, FamilyFacts, detect_family, driver_names, probe_family
from .probes.common import ProbeContext, kernel_log_marker, read_manifest, read_soc

SCHEMA = "npu-info/1"
FAMILIES = (*FAMILY_MODULES, "none")


def build_parser() -> SentenceParser:
    parser = SentenceParser(prog="npu-info", description="Report the NPU driver, runtime and SoC facts.")
    parser.add_argument("--json", action="store_true", help="print the npu-info/1 JSON object")
    parser.add_argument("--family", choices=FAMILIES, help="skip detection and probe this family")
    parser.add_argument(
        "--root",
        type=Path,
        default=Path("/"),
        help="read sysfs/procfs/device tree under this directory (a copied tree)",
    )
    return parser


def collect(ctx: ProbeContext, family: str | None = None) -> dict[str, Any]:
    errors: list[str] = []
    detection_errors: list[str] = []
    if family is None:
        family = detect_family(ctx, detection_errors)
    facts = probe_family(ctx, family) if family != "none" else FamilyFacts()
    if family == "none":
        errors.extend(detection_errors)
        errors.append(
            f"no NPU detected (no {_either(driver_names())} driver, device or "
            "device-tree node); this board runs models on the CPU only."
        )
    errors.extend(facts.errors)
    soc = read_soc(ctx)
    soc["chip_id"] = facts.chip_id
    kernel = ctx.read_text("/proc/sys/kernel/osrelease")
    if kernel is None:
        errors.append("/proc/sys/kernel/osrelease is unreadable; mount procfs.")
    if soc["soc_id"] is None:
        errors.append(
            "/sys/devices/soc0/soc_id is missing; the SoC driver (CONFIG_SOC_IMX9 or the "
            "vendor's soc info driver) is not enabled."
        )
    return {
        "schema": SCHEMA,
        "tool_version": TOOL_VERSION,
        "family": family,
        "kernel": kernel,
        "soc": soc,
        "driver": facts.driver,
        "runtime": facts.runtime,
        "daemon": facts.daemon,
        "delegate": facts.delegate,
        "memory": facts.memory,
        "load": facts.load,
        "manifest": read_manifest(ctx, errors),
        "kernel_log": kernel_log_marker(ctx),
        "errors": errors,
    }


def _either(names: list[str]) -> str:
    """ "a, b or c"."""
    return " or ".join(n for n in (", ".join(names[:-1]), names[-1] if names else "") if n)


def human(doc: dict[str, Any]) -> str:
    soc = doc["soc"]
    driver = doc["driver"] or {}
    lines = [
        f"family: {doc['family']}",
        f"kernel: {doc['kernel']}",
        f"soc: {soc['soc_id']} revision {soc['revision']} ({soc['machine']})",
        f"driver: {driver.get('name')} {driver.get('version')} devices {driver.get('devices')}",
    ]
    for section in ("runtime", "daemon", "delegate"):
        if doc[section]:
            lines.append(f"{section}: {json.dumps(doc[section])}")
    lines.append("manifest: " + ("present" if doc["manifest"] else "missing"))
    lines += [f"error: {e}" for e in doc["errors"]]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        if not args.root.is_dir():
            raise UsageError(f"--root {args.root} is not a directory; give the top of a copied board tree.")
    except UsageError as error:
        return fail_usage("npu-info", error)
    doc = collect(ProbeContext(root=args.root), args.family)
    if not emit(json.dumps(doc, indent=1) if args.json else human(doc)):
        return EXIT_FAILED
    return EXIT_OK

# SPDX-License-Identifier: MIT
"""Check 3 — runtime and daemon: the NPU runtime library and daemon are present, running and of
matching versions; the delegate library is present and loads (evidence: the NPU run loaded it).

Family-independent; a family with more to prove registers its own function for
("runtime", family): rknpu's (families/rknpu/checks/runtime.py) also proves that rknn_server is
restarted by its supervisor after being killed.
"""

from __future__ import annotations

from npu_accept.checks.base import CheckResult, failed, passed, same_version, skipped
from npu_accept.facts import BoardFacts
from npu_accept.profile import Profile

CHECK = "runtime"


def check_runtime(facts: BoardFacts, profile: Profile) -> CheckResult:
    if profile.delegate is None and not profile.runtime and not profile.daemon:
        return skipped(CHECK, f"Profile {profile.name} expects no NPU runtime, daemon or delegate.")
    if facts.info is None:
        return failed(CHECK, f"npu-info could not run on the board: {facts.info_error}", "tools")
    said: list[str] = []
    runtime = facts.info_section("runtime")
    if profile.runtime:
        expected = profile.runtime.get("name", "the NPU runtime")
        if not runtime.get("path"):
            return failed(
                CHECK,
                f"The NPU runtime {expected} is missing; install its package in the image.",
                "runtime-missing",
            )
        built = ((facts.info or {}).get("manifest") or {}).get("runtime") or {}
        if (
            runtime.get("version")
            and built.get("version")
            and not same_version(runtime["version"], built["version"])
        ):
            return failed(
                CHECK,
                f"The runtime {runtime.get('path')} is version {runtime['version']} but the "
                f"build manifest records {built['version']}; reflash the image built.",
                "runtime-version",
            )
        said.append(f"runtime {runtime.get('path')} {runtime.get('version') or ''}".strip())
    if profile.daemon:
        daemon = facts.info_section("daemon")
        expected = profile.daemon.get("name", "the NPU daemon")
        if not daemon.get("path"):
            return failed(
                CHECK,
                f"The daemon {expected} is not installed; install it with the runtime.",
                "daemon-missing",
            )
        if not daemon.get("running"):
            return failed(CHECK, f"The daemon {expected} is not running; enable its service.", "daemon-dead")
        if (
            runtime.get("version")
            and daemon.get("version")
            and not same_version(daemon["version"], runtime["version"])
        ):
            return failed(
                CHECK,
                f"The daemon {expected} is version {daemon['version']} but the runtime is "
                f"{runtime['version']}; install matching versions of both.",
                "daemon-version",
            )
        said.append(f"daemon {expected} {daemon.get('version') or ''} running".strip())
    if profile.delegate is not None:
        delegate = facts.info_section("delegate")
        path = profile.delegate.path
        if not delegate.get("present"):
            return failed(
                CHECK,
                f"The delegate library {path} is missing on the board; install the NPU "
                "delegate package in the image.",
                "delegate-missing",
            )
        for model in facts.models:
            report = (model.npu.report if model.npu else None) or {}
            loaded = (report.get("delegate") or {}).get("loaded")
            if loaded is False:
                return failed(
                    CHECK,
                    f"The delegate library {path} is present but does not load "
                    f"({model.npu.first_error() if model.npu else 'no run'}); check that it matches "
                    "the TFLite runtime of the image.",
                    "delegate-unloadable",
                )
        loaded_seen = any(
            ((m.npu.report or {}).get("delegate") or {}).get("loaded")
            for m in facts.models
            if m.npu is not None
        )
        said.append(f"delegate {path} present" + (" and loadable" if loaded_seen else ""))
    return passed(CHECK, "The NPU " + ", ".join(said) + ".")


IMPLEMENTS = {(CHECK, "*"): check_runtime}

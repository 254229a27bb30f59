# SPDX-License-Identifier: MIT
"""npu-accept: the acceptance suite and its demo.

    npu-accept run --target USER@HOST[:PORT] --board PROFILE [suite and pytest options…]
    npu-accept demo [--artifacts DIR]
    npu-accept profiles [--profiles-dir DIR]

`run` is `pytest pytests …` from an installed package: the same options, exit codes and reports
(0 all checks passed, 1 a check failed, 3 no board reachable, 4 bad options or profile).
`demo` runs the suite against two simulated i.MX95 boards (exit 0 when their verdicts are the
expected ones, 1 otherwise, 2 when this host cannot run them).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from npu_accept import __version__
from npu_accept.paths import DataMissing, profile_dirs, suite_dir

USAGE = """usage: npu-accept run --target USER@HOST[:PORT] --board PROFILE [options]   (npu-accept run --help)
       npu-accept demo [--artifacts DIR]
       npu-accept profiles [--profiles-dir DIR]
       npu-accept --version"""


def run_suite(args: Sequence[str]) -> int:
    """pytest on the installed suite, isolated from any pytest configuration around it."""
    try:
        suite = suite_dir()
    except DataMissing as exc:
        sys.stderr.write(f"npu-accept: {exc}\n")
        return int(pytest.ExitCode.USAGE_ERROR)
    # -c /dev/null: no pytest.ini/pyproject of the surroundings (e.g. a venv inside a project)
    # changes the suite; no cache directory is written into the installed package.
    argv = ["-c", "/dev/null", "--rootdir", str(suite), "-p", "no:cacheprovider", str(suite), *args]
    return int(pytest.main(argv))


def list_profiles(args: Sequence[str]) -> int:
    from npu_accept.profile import ProfileError, load_profile, profile_names

    parser = argparse.ArgumentParser(prog="npu-accept profiles", description="List the board profiles.")
    parser.add_argument("--profiles-dir", type=Path, action="append", default=[], metavar="DIR")
    options = parser.parse_args(args)
    search = profile_dirs(options.profiles_dir)
    for name in profile_names(search):
        try:
            profile = load_profile(name, search)
        except ProfileError as exc:
            print(f"{name:18s} (invalid: {exc})")
            continue
        print(f"{name:18s} {profile.description}  [{profile.source}]")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    command, rest = (args[0], args[1:]) if args else ("", [])
    if command == "run":
        return run_suite(rest)
    if command == "demo":
        from npu_accept.sim.demo import run_demo

        parser = argparse.ArgumentParser(
            prog="npu-accept demo",
            description="Run the acceptance suite against two simulated i.MX95 boards (needs root).",
        )
        parser.add_argument("--artifacts", type=Path, metavar="DIR", help="where report.html etc. go")
        return run_demo(parser.parse_args(rest).artifacts)
    if command == "profiles":
        return list_profiles(rest)
    if command in ("--version", "-V"):
        print(f"npu-accept {__version__}")
        return 0
    if command in ("-h", "--help"):
        print(USAGE)
        print(__doc__.split("\n\n", 2)[2].strip())
        return 0
    sys.stderr.write(
        f"npu-accept: {'unknown command ' + repr(command) if command else 'no command given'}; "
        "use run, demo or profiles (npu-accept --help).\n"
    )
    return 2


if __name__ == "__main__":
    sys.exit(main())

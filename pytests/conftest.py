# SPDX-License-Identifier: MIT
"""On-target acceptance suite: `pytest pytests --target USER@HOST --board PROFILE`.

The plugin is the npu_accept package's `pytest11` entry point; it is named here too so that a
checkout works without installing the package (pyproject.toml puts src/ on pytest's path).
"""

import pytest

# The plugin: options (--target, --board, …), per-board session fixtures, reports; and --lg-env
# (labgrid environments as --target). pytest imports them itself: a module this file imported
# first could not be registered for assertion rewriting, and every run from a checkout would
# close on a PytestAssertRewriteWarning.
pytest_plugins = ["npu_accept.plugin", "npu_accept.lab.pytest_labgrid"]


def pytest_configure(config: pytest.Config) -> None:
    from npu_accept.plugin import request_suite  # loaded by now: it is one of pytest_plugins

    request_suite(config)

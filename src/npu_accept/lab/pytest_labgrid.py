# SPDX-License-Identifier: MIT
"""pytest plugin: `--lg-env ENV.yaml` as an alternative to `--target` for the acceptance suite.

Loaded from pytests/conftest.py. When labgrid is installed its own pytest plugin owns the
`--lg-env` option (and the `env`/`target` fixtures); otherwise this module adds the option so
that using it says how to install labgrid. Before the suite's plugin reads its options, the
environment's targets become `--target` values, its SSH keyfile `--identity`, and its
`options: npu_board` the `--board` when none is given.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from npu_accept.lab.errors import LabError
from npu_accept.lab.labgrid_env import load_environment


def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    if pluginmanager.has_plugin("labgrid"):
        return
    parser.getgroup("npu-accept").addoption(
        "--lg-env",
        dest="lg_env",
        metavar="ENV.yaml",
        help="labgrid environment naming the boards (NetworkService + SSHDriver); needs labgrid",
    )


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    env_file = getattr(config.option, "lg_env", None) or os.environ.get("LG_ENV")
    if not env_file:
        return
    if config.option.target:
        raise pytest.UsageError("Give the boards either with --target or with --lg-env, not both.")
    try:
        lab = load_environment(Path(env_file))
    except LabError as exc:
        raise pytest.UsageError(str(exc)) from None
    config.option.target = [t.target for t in lab.targets]
    identities = {t.identity for t in lab.targets if t.identity is not None}
    if len(identities) > 1:
        raise pytest.UsageError(
            f"labgrid environment {env_file} gives each target its own SSH key; "
            "the suite takes one --identity, so use one key for the fleet."
        )
    if identities and getattr(config.option, "identity", None) is None:
        config.option.identity = identities.pop()
    if lab.board and not getattr(config.option, "board", None):
        config.option.board = lab.board

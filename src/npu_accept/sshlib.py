# SPDX-License-Identifier: MIT
"""paramiko, imported without importing invoke.

paramiko (3.x to 5.x) imports the task runner invoke when its ssh_config module loads, only to
run ``Match exec`` lines of an ssh_config file, which the suite never reads; invoke in turn
imports asyncio and unittest.mock. That is 0.05-0.08 s of CPU in every suite run (a third of
paramiko's import). Here paramiko loads with invoke held back, and its ssh_config module gets a
stand-in that imports invoke at its first use: ``Match exec`` works as before for any other user
of paramiko in the process, and fails as before where invoke is not installed.
"""

from __future__ import annotations

import importlib
import logging
import sys
from types import ModuleType
from typing import Any


class _InvokeOnFirstUse:
    """Stands for the invoke module in paramiko.config until something there uses it."""

    def __getattr__(self, name: str) -> Any:
        module = importlib.import_module("invoke")
        config = sys.modules.get("paramiko.config")
        if config is not None and getattr(config, "invoke", None) is self:
            setattr(config, "invoke", module)  # noqa: B010 - a module attribute no stub declares
        return getattr(module, name)


def _load() -> ModuleType:
    if "paramiko" in sys.modules or "invoke" in sys.modules:
        return importlib.import_module("paramiko")
    sys.modules["invoke"] = None  # type: ignore[assignment]  # "import invoke" raises ImportError
    try:
        module = importlib.import_module("paramiko")
    finally:
        if sys.modules.get("invoke", 0) is None:
            del sys.modules["invoke"]
    config = sys.modules.get("paramiko.config")
    if config is not None and getattr(config, "invoke", 0) is None:
        setattr(config, "invoke", _InvokeOnFirstUse())  # noqa: B010 - as above
        setattr(config, "invoke_import_error", None)  # noqa: B010
    return module


def _silence() -> None:
    """paramiko logs a board that breaks the handshake with its own traceback ("Exception
    (client): …"); without a handler Python's last-resort handler prints it raw on stderr, and
    pytest shows it under "Captured log". The suite says each failure in one sentence: paramiko's
    records go nowhere (an application wanting them adds a handler to the "paramiko" logger)."""
    logger = logging.getLogger("paramiko")
    logger.addHandler(logging.NullHandler())
    logger.propagate = False


paramiko = _load()
_silence()

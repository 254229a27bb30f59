# SPDX-License-Identifier: MIT
"""Real BitBake (the bb package of PyPI's bitbake-setup) parsing meta-npu's classes.

BitBake's parser and event machinery are pure Python, so a class can be parsed into a real
DataSmart and its event handlers fired with real bb.event objects, as the cooker does
(bb/cookerdata.py registers INHERITed classes' handlers the same way). What cannot run here is
a whole build, which needs oe-core; that is kas-parse's job.

bitbake-setup ships bb but not hashserv, BitBake's hash-equivalence client, which bb.siggen
imports at module level. Parsing never talks to a hash server, so an empty placeholder module
stands in for that import only.
"""

from __future__ import annotations

import logging
import sys
import types
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


def _bitbake() -> types.ModuleType:
    if "hashserv" not in sys.modules:
        hashserv = types.ModuleType("hashserv")
        hashserv.client = types.ModuleType("hashserv.client")  # type: ignore[attr-defined]
        sys.modules["hashserv"] = hashserv
        sys.modules["hashserv.client"] = hashserv.client  # type: ignore[attr-defined]
    import bb
    import bb.data_smart
    import bb.event
    import bb.parse
    import bb.utils

    return bb


@dataclass
class FatalLog(logging.Handler):
    """Collects what bb.fatal logs (it logs, then raises BBHandledException)."""

    messages: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        logging.Handler.__init__(self, logging.ERROR)

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())

    def __hash__(self) -> int:
        return id(self)


@dataclass
class ParsedClasses:
    data: Any  # bb.data_smart.DataSmart
    bb: types.ModuleType

    def function(self, name: str) -> Any:
        """A python `def` of the parsed classes (BitBake compiles them into bb.utils._context)."""
        return self.bb.utils._context[name]

    def fire(self, event: Any) -> str | None:
        """Fire EVENT at the registered handlers; the bb.fatal sentence, or None if none stopped it."""
        log = FatalLog()
        logger = logging.getLogger("BitBake")
        logger.addHandler(log)
        try:
            self.bb.event.fire(event, self.data)
        except self.bb.BBHandledException:
            return " ".join(log.messages) or "stopped without a message"
        finally:
            logger.removeHandler(log)
        return None

    def run_anonymous(self) -> None:
        """Run the classes' anonymous python, as BitBake does when it finalises a recipe."""
        self.bb.parse.ast.runAnonFuncs(self.data)


@contextmanager
def parsed_classes(classes: list[Path], variables: dict[str, str]) -> Iterator[ParsedClasses]:
    """Parse CLASSES (in order) over VARIABLES and register their event handlers."""
    bb = _bitbake()
    saved = bb.event.get_class_handlers()
    bb.event.set_class_handlers(bb.event.clean_class_handlers())
    data = bb.data_smart.DataSmart()
    for name, value in variables.items():
        data.setVar(name, value)
    data.setVar("BBPATH", str(classes[0].parent.parent))
    try:
        for cls in classes:
            # A .conf file is parsed as the cooker parses layer.conf (bb.cookerdata
            # parse_config_file: baseconfig=True), the only way addpylib is honoured.
            bb.parse.handle(str(cls), data, True, baseconfig=cls.suffix == ".conf")
        for var in data.getVar("__BBHANDLERS", False) or []:
            bb.event.register(
                var,
                data.getVar(var, False),
                (data.getVarFlag(var, "eventmask") or "").split(),
                data.getVarFlag(var, "filename", False),
                int(data.getVarFlag(var, "lineno", False)),
                data,
            )
        yield ParsedClasses(data, bb)
    finally:
        bb.event.set_class_handlers(saved)

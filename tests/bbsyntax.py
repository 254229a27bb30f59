# SPDX-License-Identifier: MIT
"""Syntax check of BitBake metadata files with oelint-adv's parser (oelint_parser).

oelint_parser is lenient: a line it cannot classify becomes a plain ``Item`` instead of an error.
This module turns that leniency into a check: every statement must be one BitBake knows, every
assignment value must be one quoted string, every python function and ``def`` block must compile,
and every shell function must pass ``bash -n``.
"""

from __future__ import annotations

import re
import subprocess
import textwrap
from dataclasses import dataclass
from pathlib import Path

from oelint_parser.cls_item import Comment, FlagAssignment, Function, Item, PythonBlock, Variable
from oelint_parser.cls_stash import Stash
from oelint_parser.parser import get_items

METADATA_SUFFIXES = (".bb", ".bbappend", ".bbclass", ".conf", ".inc")

# Statements BitBake accepts that oelint_parser leaves unclassified: addhandler, and include or
# require of a ${@...} expression (which the parser turns into "!!!inlineblock!!!").
_DIRECTIVE = re.compile(r"^(addhandler\s+\S+|(require|include)\s+\S.*)$")


@dataclass(frozen=True)
class SyntaxProblem:
    path: Path
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


def metadata_files(root: Path) -> list[Path]:
    """Every BitBake metadata file under ROOT, leaving out recipe payload directories (files/)."""
    return sorted(
        p
        for p in root.rglob("*")
        if p.is_file() and p.name.endswith(METADATA_SUFFIXES) and "files" not in p.relative_to(root).parts
    )


def _quoted(value: str) -> bool:
    value = value.strip()
    return len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'"


def _python_error(body: str, wrap: bool) -> str | None:
    source = "def _bitbake_function(d, e=None):\n" + textwrap.indent(body or "pass", "    ") if wrap else body
    try:
        compile(source, "<bitbake>", "exec")
    except SyntaxError as err:
        return f"python does not compile: {err.msg}"
    return None


def _shell_error(body: str) -> str | None:
    proc = subprocess.run(["bash", "-n"], input=body, text=True, capture_output=True, check=False)
    if proc.returncode != 0:
        return "shell does not parse: " + (proc.stderr.strip().splitlines() or ["bash -n failed"])[-1]
    return None


def _item_problem(item: Item) -> str | None:
    if isinstance(item, Comment):
        return None
    if isinstance(item, (Variable, FlagAssignment)):
        value = item.VarValue if isinstance(item, Variable) else item.Value
        return None if _quoted(value) else f"value is not one quoted string: {item.Raw.strip()[:60]!r}"
    if isinstance(item, Function):
        if not item.Raw.rstrip().endswith("}"):
            return f"function {item.FuncName or '(anonymous)'} has no closing brace"
        if item.IsPython:
            return _python_error(item.FuncBodyRaw, wrap=True)
        return _shell_error(item.FuncBodyRaw)
    if isinstance(item, PythonBlock):
        return _python_error(item.Raw, wrap=False)
    if type(item) is Item:
        raw = item.Raw.strip()
        if raw and not _DIRECTIVE.match(raw):
            return f"not a BitBake statement: {raw.splitlines()[0][:60]!r}"
    return None


def syntax_problems(path: Path) -> list[SyntaxProblem]:
    """The syntax problems of one metadata file; empty when it parses cleanly."""
    problems = []
    for item in get_items(Stash(quiet=True), str(path)):
        if item.Origin != str(path):
            continue  # items of included files are checked when that file is checked
        message = _item_problem(item)
        if message:
            problems.append(SyntaxProblem(path, item.InFileLine, message))
    return problems

# SPDX-License-Identifier: MIT
"""Test helper: run the on-target tools (npu-run, npu-info) from the layer's source tree as programs."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema

REPO = Path(__file__).resolve().parents[1]
TOOLS_DIR = REPO / "meta-npu" / "recipes-tools" / "npu-tools" / "files"
SCHEMA_DIR = REPO / "src" / "npu_accept" / "schemas"
# Unit tests import the on-target package (npu_target) straight from the layer.
if str(TOOLS_DIR) not in sys.path:
    sys.path.insert(0, str(TOOLS_DIR))


@dataclass
class ToolRun:
    code: int
    stdout: str
    stderr: str

    def json(self) -> dict[str, Any]:
        return json.loads(self.stdout)


def run_tool(
    name: str,
    *args: str,
    tools_dir: Path = TOOLS_DIR,
    env: dict[str, str] | None = None,
    timeout: float = 300,
) -> ToolRun:
    proc = subprocess.run(
        [sys.executable, str(tools_dir / name), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        check=False,
    )
    return ToolRun(proc.returncode, proc.stdout, proc.stderr)


@cache
def _schema(name: str) -> dict[str, Any]:
    """The shipped schema with its registry enums filled (npu_accept.schemaload)."""
    from npu_accept import schemaload

    return schemaload.load(name)


def validate(doc: dict[str, Any], name: str) -> None:
    """Raise jsonschema.ValidationError if doc breaks schemas/<name>.schema.json."""
    jsonschema.Draft202012Validator(_schema(name)).validate(doc)


def assert_one_sentence_usage_error(run: ToolRun, *words: str) -> None:
    """Exit 2, nothing on stdout, one line on stderr naming the thing, never a traceback."""
    assert run.code == 2, (run.code, run.stdout, run.stderr)
    assert run.stdout == ""
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, run.stderr
    assert "Traceback" not in run.stderr
    for word in words:
        assert word in lines[0], (word, lines[0])

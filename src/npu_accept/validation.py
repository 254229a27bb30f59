# SPDX-License-Identifier: MIT
"""JSON Schema validation of what boards print and what profiles say, by jsonschema.

One validator per schema (draft 2020-12), built once per process; `best_error` is None for a valid
document and otherwise jsonschema's best_match error, whose path and message the callers turn into
one sentence.  Measured on an npu-info report of the RK3588 twin: 0.36 ms a report, 1.8 ms for a
board's five reports (docs/performance.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import jsonschema


class Validator:
    """A schema's validator: is a document valid, and if not, what is the most telling error."""

    def __init__(self, schema: Mapping[str, Any]) -> None:
        self.schema = schema
        self._validator = jsonschema.Draft202012Validator(schema)

    def is_valid(self, value: Any) -> bool:
        return bool(self._validator.is_valid(value))

    def best_error(self, value: Any) -> jsonschema.ValidationError | None:
        if self._validator.is_valid(value):
            return None
        # types-jsonschema leaves best_match unannotated
        found: jsonschema.ValidationError | None = jsonschema.exceptions.best_match(
            self._validator.iter_errors(value)
        )
        return found

# SPDX-License-Identifier: MIT
"""JSON Schema (draft 2020-12) compiled into plain Python checks, for the keywords the suite's own
schemas (src/npu_accept/schemas) use.

Every board sends five JSON reports; jsonschema walks each through its general machinery (about
2 ms a report, the biggest share of the suite's own CPU per board after SSH). A schema compiled
here answers only "valid or not" (about 50 us), with jsonschema's semantics for each keyword it
supports. Callers ask jsonschema for the sentence only when a document is refused, so a refusal
reads exactly as before, and jsonschema has the last word whenever the two would disagree.

A schema using any keyword not listed in :data:`SUPPORTED` (or a ``$ref`` that is not a pointer
into the same document) is refused at compile time with :class:`UnsupportedSchema`; callers then
validate with jsonschema alone. tests/test_schemacheck.py holds the two to the same verdicts on
real reports and thousands of mutants of them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import jsonschema

Check = Callable[[Any], bool]

SUPPORTED = frozenset(
    {
        "type", "const", "enum", "allOf", "anyOf", "oneOf", "$ref",
        "properties", "required", "additionalProperties", "minProperties", "maxProperties",
        "items", "minItems", "maxItems", "uniqueItems",
        "minLength", "maxLength", "pattern",
        "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
    }
)  # fmt: skip
ANNOTATIONS = frozenset(
    {"$schema", "$id", "$defs", "$comment", "title", "description", "default", "examples", "deprecated"}
)
_DIALECT = "https://json-schema.org/draft/2020-12/schema"


class UnsupportedSchema(ValueError):
    """The schema uses something this compiler does not implement; validate with jsonschema."""


def compile_schema(root: Mapping[str, Any] | bool) -> Check:
    """A function telling whether a JSON value (as json.loads returns it) is valid against ``root``."""
    if isinstance(root, Mapping) and root.get("$schema", _DIALECT) != _DIALECT:
        raise UnsupportedSchema(f"only draft 2020-12 schemas are compiled, not {root['$schema']!r}")
    return _Compiler(root).compile(root)


class _Compiler:
    def __init__(self, root: Mapping[str, Any] | bool) -> None:
        self.root = root
        self.refs: dict[str, list[Check]] = {}

    def compile(self, node: Any) -> Check:
        if node is True:
            return _always
        if node is False:
            return _never
        if not isinstance(node, Mapping):
            raise UnsupportedSchema(f"a schema must be an object or a boolean, not {node!r}")
        unknown = set(node) - SUPPORTED - ANNOTATIONS
        if unknown:
            raise UnsupportedSchema(f"keyword(s) {', '.join(sorted(unknown))} are not compiled")
        checks: list[Check] = []
        if "$ref" in node:
            checks.append(self._ref(node["$ref"]))
        if "type" in node:
            checks.append(_type_check(node["type"]))
        if "const" in node:
            value = node["const"]
            checks.append(lambda v: _equal(v, value))
        if "enum" in node:
            options = list(node["enum"])
            checks.append(lambda v: any(_equal(v, o) for o in options))
        checks += self._combinators(node)
        checks += _number_checks(node)
        checks += _string_checks(node)
        checks += self._array_checks(node)
        checks += self._object_checks(node)
        return _all(checks)

    def _ref(self, ref: Any) -> Check:
        if not isinstance(ref, str) or not ref.startswith("#"):
            raise UnsupportedSchema(f"only references into the same schema are compiled, not {ref!r}")
        if ref not in self.refs:
            cell: list[Check] = []
            self.refs[ref] = cell  # a recursive reference finds the cell before it is filled
            cell.append(self.compile(_pointer(self.root, ref)))
        cell = self.refs[ref]
        return lambda v: cell[0](v)

    def _combinators(self, node: Mapping[str, Any]) -> list[Check]:
        checks: list[Check] = []
        if "allOf" in node:
            checks.append(_all([self.compile(s) for s in node["allOf"]]))
        if "anyOf" in node:
            parts = [self.compile(s) for s in node["anyOf"]]
            checks.append(lambda v: any(p(v) for p in parts))
        if "oneOf" in node:
            parts = [self.compile(s) for s in node["oneOf"]]
            checks.append(lambda v: sum(1 for p in parts if p(v)) == 1)
        return checks

    def _array_checks(self, node: Mapping[str, Any]) -> list[Check]:
        checks: list[Check] = []
        low, high = node.get("minItems"), node.get("maxItems")
        if low is not None or high is not None:
            checks.append(_length_check(list, low, high))
        if node.get("uniqueItems") is True:
            checks.append(lambda v: not isinstance(v, list) or _unique(v))
        if "items" in node:
            item = self.compile(node["items"])
            checks.append(lambda v: not isinstance(v, list) or all(item(x) for x in v))
        return checks

    def _object_checks(self, node: Mapping[str, Any]) -> list[Check]:
        checks: list[Check] = []
        low, high = node.get("minProperties"), node.get("maxProperties")
        if low is not None or high is not None:
            checks.append(_length_check(dict, low, high))
        if "required" in node:
            required = tuple(node["required"])
            checks.append(lambda v: not isinstance(v, dict) or all(k in v for k in required))
        properties = {k: self.compile(s) for k, s in node.get("properties", {}).items()}
        if properties:
            checks.append(
                lambda v: not isinstance(v, dict) or all(c(v[k]) for k, c in properties.items() if k in v)
            )
        if "additionalProperties" in node:
            extra = self.compile(node["additionalProperties"])
            if extra is _never:
                checks.append(lambda v: not isinstance(v, dict) or all(k in properties for k in v))
            elif extra is not _always:
                checks.append(
                    lambda v: (
                        not isinstance(v, dict) or all(extra(x) for k, x in v.items() if k not in properties)
                    )
                )
        return checks


def _always(value: Any) -> bool:
    return True


def _never(value: Any) -> bool:
    return False


def _all(checks: list[Check]) -> Check:
    if not checks:
        return _always
    if len(checks) == 1:
        return checks[0]
    checks_ = tuple(checks)

    def check(value: Any) -> bool:
        for one in checks_:
            if not one(value):
                return False
        return True

    return check


def _pointer(root: Any, ref: str) -> Any:
    """The subschema a ``#/a/b`` reference names (RFC 6901, as jsonschema resolves it)."""
    node = root
    if ref == "#":
        return root  # "#/" is not the root but its member named "" (RFC 6901)
    if not ref.startswith("#/"):
        raise UnsupportedSchema(f"only JSON-pointer references are compiled, not {ref!r}")
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            raise UnsupportedSchema(f"reference {ref!r} names nothing in the schema")
    return node


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


_TYPES: dict[str, Check] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "number": _is_number,
    # draft 2020-12: a number with a zero fractional part is an integer (1.0 too)
    "integer": lambda v: (
        (isinstance(v, int) and not isinstance(v, bool)) or (isinstance(v, float) and v.is_integer())
    ),
}


def _type_check(spec: Any) -> Check:
    names = [spec] if isinstance(spec, str) else list(spec)
    unknown = [n for n in names if n not in _TYPES]
    if unknown:
        raise UnsupportedSchema(f"unknown type(s) {unknown!r}")
    tests = tuple(_TYPES[n] for n in names)
    if len(tests) == 1:
        return tests[0]
    return lambda v: any(t(v) for t in tests)


def _number_checks(node: Mapping[str, Any]) -> list[Check]:
    checks: list[Check] = []
    # Written as jsonschema refuses ("instance < minimum" is an error), so NaN fares the same.
    for keyword, ok in (
        ("minimum", lambda v, b: not v < b),
        ("maximum", lambda v, b: not v > b),
        ("exclusiveMinimum", lambda v, b: not v <= b),
        ("exclusiveMaximum", lambda v, b: not v >= b),
    ):
        if keyword in node:
            bound = node[keyword]
            checks.append(lambda v, b=bound, ok=ok: not _is_number(v) or ok(v, b))
    return checks


def _string_checks(node: Mapping[str, Any]) -> list[Check]:
    checks: list[Check] = []
    low, high = node.get("minLength"), node.get("maxLength")
    if low is not None or high is not None:
        checks.append(_length_check(str, low, high))
    if "pattern" in node:
        search = re.compile(node["pattern"]).search  # jsonschema searches, it does not anchor
        checks.append(lambda v: not isinstance(v, str) or search(v) is not None)
    return checks


def _length_check(kind: type, low: int | None, high: int | None) -> Check:
    low_ = 0 if low is None else low
    high_ = float("inf") if high is None else high
    return lambda v: not isinstance(v, kind) or low_ <= len(v) <= high_


def _unbool(value: Any) -> Any:
    """True and False are not 1 and 0 to JSON Schema (jsonschema's _utils.unbool)."""
    if value is True:
        return _TRUE
    if value is False:
        return _FALSE
    return value


_TRUE, _FALSE = object(), object()


def _equal(one: Any, two: Any) -> bool:
    """JSON equality as jsonschema's _utils.equal has it: 1 == 1.0, True != 1, deep for containers."""
    if one is two:
        return True
    if isinstance(one, str) or isinstance(two, str):
        return one == two
    if isinstance(one, Sequence) and isinstance(two, Sequence):
        return len(one) == len(two) and all(_equal(a, b) for a, b in zip(one, two, strict=True))
    if isinstance(one, Mapping) and isinstance(two, Mapping):
        return one.keys() == two.keys() and all(_equal(one[k], two[k]) for k in one)
    return _unbool(one) == _unbool(two)


def _unique(items: list[Any]) -> bool:
    for index, item in enumerate(items):
        for other in items[index + 1 :]:
            if _equal(item, other):
                return False
    return True


class Validator:
    """A schema's compiled check, with jsonschema (imported only then) to explain a refusal.

    ``best_error`` is None for a valid document and otherwise jsonschema's best_match error, so a
    refusal reads as jsonschema words it; should the compiled check ever refuse what jsonschema
    accepts, jsonschema's verdict stands.
    """

    def __init__(self, schema: Mapping[str, Any]) -> None:
        self.schema = schema
        try:
            self._check: Check | None = compile_schema(schema)
        except UnsupportedSchema:
            self._check = None
        self._explainer: Any = None

    def is_valid(self, value: Any) -> bool:
        return self.best_error(value) is None

    def best_error(self, value: Any) -> jsonschema.ValidationError | None:
        if self._check is not None and self._check(value):
            return None
        import jsonschema  # only a refused document needs it (0.05 s of start-up otherwise)

        if self._explainer is None:
            self._explainer = jsonschema.Draft202012Validator(self.schema)
        return jsonschema.exceptions.best_match(self._explainer.iter_errors(value))

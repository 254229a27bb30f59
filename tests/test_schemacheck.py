# SPDX-License-Identifier: MIT
"""The compiled schema checks (npu_accept.schemacheck) give jsonschema's verdict: on real reports
of the on-target tools, the shipped profiles and the image facts, and on thousands of seeded
mutants of them (wrong types, missing and unknown keys, out-of-range numbers, duplicates, long
strings). A refusal is still worded by jsonschema."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import jsonschema
import numpy as np
import pytest
import yaml
from models import FACE_DETECTION, face_detection_input, model_path
from npu_tools import run_tool
from test_npu_info import neutron_board

from npu_accept.paths import packaged_profiles_dir, schemas_dir
from npu_accept.schemacheck import UnsupportedSchema, Validator, compile_schema
from npu_accept.untrusted import BoardDataError, validated

REPO = Path(__file__).resolve().parents[1]
MUTANTS = {"npu-info": 400, "npu-run": 400, "profile": 150, "image-facts": 40}  # per document


def _schema(name: str) -> dict[str, Any]:
    return json.loads((schemas_dir() / f"{name}.schema.json").read_text())


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[dict[str, Any]]]:
    """Real documents per schema: the tools' own reports, the shipped profiles, the image facts."""
    work = tmp_path_factory.mktemp("schemacheck")
    infos = []
    for root in (neutron_board(work / "neutron"), work / "bare"):
        root.mkdir(parents=True, exist_ok=True)
        env = {"PATH": "/usr/bin:/bin", "HOME": str(root)}
        run = run_tool("npu-info", "--json", "--root", str(root), env=env)
        infos.append(run.json())
    np.save(work / "in.npy", face_detection_input())
    run = run_tool(
        "npu-run",
        "--model",
        str(model_path(FACE_DETECTION)),
        "--input",
        str(work / "in.npy"),
        "--output-dir",
        str(work / "out"),
        "--backend",
        "tflite-cpu",
        "--runs",
        "2",
        "--json",
    )
    assert run.code == 0, run.stderr
    cpu = run.json()
    delegated = copy.deepcopy(cpu)
    delegated["backend"] = "tflite-delegate"
    delegated["delegate"] = {
        "path": "/usr/lib/libneutron_delegate.so",
        "version": None,
        "options": {"target": "imx95"},
        "loaded": True,
    }
    profiles = [yaml.safe_load(p.read_text()) for p in sorted(packaged_profiles_dir().glob("*.yaml"))]
    facts = [json.loads(p.read_text()) for p in sorted((REPO / "tests/data/image-facts").glob("*.json"))]
    return {
        "npu-info": infos,
        "npu-run": [cpu, delegated],
        "profile": profiles,
        "image-facts": [f for f in facts if f.get("schema") == "image-facts/1"],
    }


def _paths(value: Any, here: tuple = ()) -> list[tuple]:
    found = [here]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*here, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*here, index))
    return found


_ODD_VALUES = [
    None, True, False, 0, 1, -1, 1.0, 3.0, 2.5, -0.5, 2**31, -(2**31) - 1, 1e31, "", "x", "1.2.3",
    "0" * 64, "a" * 5000, [], [1], [1, 1], [1, 1.0], [True, 1], {}, {"k": "v"}, "npu-run/1",
    "tflite-cpu", "float32", ["a", "a"],
]  # fmt: skip


def _mutate(document: Any, rng: random.Random) -> Any:
    """The document with one to three random changes."""
    doc = copy.deepcopy(document)
    for _ in range(rng.choice((1, 1, 2, 3))):
        path = rng.choice(_paths(doc))
        if not path:
            continue
        parent = doc
        for step in path[:-1]:
            parent = parent[step]
        last = path[-1]
        value = parent[last]
        kind = rng.randrange(7)
        if kind == 0 and isinstance(parent, dict):
            del parent[last]
        elif kind == 1 and isinstance(value, dict):
            value[rng.choice(["unexpected", "extra", "name"])] = rng.choice(_ODD_VALUES)
        elif kind == 2 and isinstance(value, list):
            value.append(copy.deepcopy(value[0]) if value and rng.random() < 0.6 else rng.choice(_ODD_VALUES))
        elif kind == 3 and isinstance(value, (int, float)) and not isinstance(value, bool):
            parent[last] = rng.choice([-value - 1, value * 1e9, float(value), value + 0.5, -1e-9])
        elif kind == 4 and isinstance(value, str):
            parent[last] = rng.choice([value + "!", value[:1], value.upper(), value * 300, ""])
        else:
            parent[last] = copy.deepcopy(rng.choice(_ODD_VALUES))
    return doc


@pytest.mark.parametrize("name", ["npu-info", "npu-run", "profile", "image-facts"])
def test_compiled_check_agrees_with_jsonschema(corpus: dict[str, list[dict[str, Any]]], name: str) -> None:
    schema = _schema(name)
    compiled = compile_schema(schema)  # the shipped schemas use only compiled keywords
    reference = jsonschema.Draft202012Validator(schema)
    documents = corpus[name]
    assert documents, f"no real {name} document to start from"
    verdicts = {True: 0, False: 0}
    rng = random.Random(f"schemacheck-{name}")
    for document in documents:
        assert compiled(document) and reference.is_valid(document)
        for _ in range(MUTANTS[name]):
            mutant = _mutate(document, rng)
            expected = reference.is_valid(mutant)
            assert compiled(mutant) == expected, (
                f"{name}: jsonschema says {'valid' if expected else 'invalid'} for "
                f"{json.dumps(mutant)[:2000]}"
            )
            verdicts[expected] += 1
    total = sum(verdicts.values())
    # The mutants exercise both verdicts, not just one.
    assert verdicts[True] > total // 20 and verdicts[False] > total // 5, verdicts


_NESTED = {"$defs": {"n": {"type": "array", "items": {"$ref": "#/$defs/n"}}}, "$ref": "#/$defs/n"}


@pytest.mark.parametrize(
    "schema, value, valid",
    [
        ({"type": "integer"}, 1.0, True),
        ({"type": "integer"}, True, False),
        ({"type": "number"}, False, False),
        ({"const": 1}, 1.0, True),
        ({"const": 1}, True, False),
        ({"enum": [[1, True]]}, [1.0, True], True),
        ({"enum": [[1, True]]}, [True, 1], False),
        ({"uniqueItems": True}, [1, 1.0], False),
        ({"uniqueItems": True}, [1, True], True),
        ({"uniqueItems": True}, [{"a": [1]}, {"a": [1.0]}], False),
        ({"minimum": 0}, float("nan"), True),  # as jsonschema: NaN is not below anything
        ({"maximum": 0}, "text", True),  # numeric keywords ignore other types
        ({"pattern": "b"}, "abc", True),  # searched, not anchored
        ({"maxLength": 2}, "\u00e9\u00e9", True),  # code points, not bytes
        ({"oneOf": [{"type": "integer"}, {"type": "number"}]}, 1, False),
        ({"items": False}, [], True),
        ({"items": False}, [1], False),
        ({"additionalProperties": False, "properties": {"a": True}}, {"a": 1, "b": 2}, False),
        (_NESTED, [[[]]], True),
        (_NESTED, [[1]], False),
    ],
)  # fmt: skip
def test_keyword_semantics_match_jsonschema(schema: dict[str, Any], value: Any, valid: bool) -> None:
    assert jsonschema.Draft202012Validator(schema).is_valid(value) is valid
    assert compile_schema(schema)(value) is valid


@pytest.mark.parametrize(
    "schema",
    [
        {"not": {"type": "null"}},
        {"format": "date"},
        {"prefixItems": [{"type": "string"}]},
        {"$ref": "other.schema.json#/x"},
        {"$ref": "#/$defs/missing"},
        {"$ref": "#/"},  # the member named "", not the root (which would recurse without end)
        {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"},
        {"type": "decimal"},
    ],
)
def test_unsupported_schema_is_refused(schema: dict[str, Any]) -> None:
    with pytest.raises(UnsupportedSchema):
        compile_schema(schema)


@pytest.mark.parametrize("value, valid", [(None, False), ([1], False), (["a"], True), ({"a": 1}, True)])
def test_a_schema_not_compiled_is_validated_by_jsonschema_alone(value: Any, valid: bool) -> None:
    validator = Validator({"not": {"type": "null"}, "prefixItems": [{"type": "string"}]})
    assert validator.is_valid(value) is valid


def test_a_refused_report_is_worded_by_jsonschema(corpus: dict[str, list[dict[str, Any]]]) -> None:
    report = copy.deepcopy(corpus["npu-run"][0])
    report["nodes"]["delegated"] = -3
    with pytest.raises(BoardDataError) as refused:
        validated(json.dumps(report).encode(), "npu-run", "npu-run on the board")
    assert str(refused.value) == (
        "npu-run on the board printed a report that breaks its npu-run schema at nodes/delegated "
        "(-3 is less than the minimum of 0)"
    )
    assert validated(json.dumps(corpus["npu-run"][0]).encode(), "npu-run", "npu-run") == corpus["npu-run"][0]

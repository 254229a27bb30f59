# SPDX-License-Identifier: MIT
"""The signature catalogue: what each known failure prints, as data, one file per NPU family.

Each family package (`npu_accept.families.<family>`) holds a `signatures.yaml`; the family "*"
(`npu_accept.families.any`) holds what any NPU board can print (IOMMU faults, firmware, the TFLite
runtime).  A signature is an id, the line patterns that fire it (regular expressions over a line's
message, its wrapping taken off by `npu_accept.diagnose.lines`), the cause sentence and the action,
its rank against the others (lower is a deeper cause: a cause before the symptoms it produces),
the error lines it explains, the threads it was learnt from and the field-corpus cases that must
fire it and must not.  npu-diagnose and the suite's kernel-log check read this one catalogue;
`npu-diagnose --signatures` lists it.

File format (every key is checked at load; an unknown key is an error naming the file):

    family: rknpu
    facts:                       # values read from any input line, named groups "v"
      librknnrt: ['librknnrt version: (?P<v>\\d+(?:\\.\\d+)+)']
    benign:                      # error-looking lines known to be harmless
      - match: 'RKNPU: .*-EBUSY'
        why: one sentence
        learnt_from: [URL]
    signatures:
      - id: rknn-runtime-needs-newer-driver
        rank: 12
        match: ['recommend to upgrade the driver to the new version: >= (?P<min>[\\d.]+)']
        needs: []                # every one must match some input line too
        unless: []               # none may match any input line
        kernel: false            # true: kernel lines only, also read by the kernel-log check
        meaning: ...             # kernel signatures: what the line means, for check 8
        sentence: "librknnrt {librknnrt|on the board} needs RKNPU driver >= {min} …"
        action: ...
        explains: ['rknn_init fail']
        learnt_from: [URL]
        fires: [case ids]
        near_misses: [case ids]
        rule: python             # optional: the finding is made in code (findings.py); the entry
                                 # carries its explains / sources / cases
        causes: [cause ids]      # the field corpus cause_ids it names (default: its own id)
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml

from npu_accept.diagnose.lines import Line

ANY_FAMILY = "*"
SIGNATURE_KEYS = {
    "id",
    "rank",
    "match",
    "needs",
    "unless",
    "kernel",
    "meaning",
    "sentence",
    "action",
    "explains",
    "learnt_from",
    "fires",
    "near_misses",
    "rule",
    "causes",
}
FILE_KEYS = {"family", "facts", "benign", "signatures"}
BENIGN_KEYS = {"match", "why", "learnt_from", "fires"}
PLACEHOLDER = re.compile(r"\{(?P<name>[A-Za-z_]\w*)(?:\|(?P<default>[^{}]*))?\}")


class CatalogueError(Exception):
    """A catalogue file is malformed; the message names the file, the entry and the fix."""


@dataclass(frozen=True)
class Signature:
    id: str
    family: str
    rank: int
    match: tuple[re.Pattern[str], ...]
    sentence: str
    action: str
    needs: tuple[re.Pattern[str], ...] = ()
    unless: tuple[re.Pattern[str], ...] = ()
    kernel: bool = False
    meaning: str = ""
    explains: tuple[re.Pattern[str], ...] = ()
    learnt_from: tuple[str, ...] = ()
    fires: tuple[str, ...] = ()
    near_misses: tuple[str, ...] = ()
    rule: str = "catalogue"
    causes: tuple[str, ...] = ()  # the field corpus's cause_ids this signature names (default: its id)

    def names(self, cause_id: str) -> bool:
        return cause_id in (self.causes or (self.id,))

    def first_match(self, lines: Sequence[Line]) -> tuple[Line, re.Match[str]] | None:
        for line in lines:
            if self.kernel and not _kernelish(line):
                continue
            for pattern in self.match:
                found = pattern.search(line.message)
                if found:
                    return line, found
        return None


@dataclass(frozen=True)
class Benign:
    family: str
    match: re.Pattern[str]
    why: str
    learnt_from: tuple[str, ...] = ()


@dataclass(frozen=True)
class Catalogue:
    signatures: tuple[Signature, ...]
    benign: tuple[Benign, ...]
    facts: dict[str, tuple[re.Pattern[str], ...]] = field(default_factory=dict)

    def for_family(self, family: str | None) -> Catalogue:
        """The entries that apply to a family's board (all of them when the family is unknown)."""
        if family is None:
            return self
        keep = (ANY_FAMILY, family)
        return Catalogue(
            tuple(s for s in self.signatures if s.family in keep),
            tuple(b for b in self.benign if b.family in keep),
            self.facts,
        )

    def by_id(self, ident: str) -> Signature | None:
        return next((s for s in self.signatures if s.id == ident), None)

    def read_facts(self, lines: Iterable[Line]) -> dict[str, str]:
        """The first value of each fact found in the lines."""
        found: dict[str, str] = {}
        for line in lines:
            for name, patterns in self.facts.items():
                if name in found:
                    continue
                for pattern in patterns:
                    match = pattern.search(line.message)
                    if match:
                        found[name] = match.group("v")
                        break
        return found


def _kernelish(line: Line) -> bool:
    return line.source in ("kernel", "text") or line.source.startswith("journal:")


def fill(template: str, values: dict[str, str]) -> str:
    """A sentence with {name} and {name|default} filled from match groups and facts."""

    def one(match: re.Match[str]) -> str:
        value = values.get(match.group("name"))
        if value:
            return value
        return match.group("default") if match.group("default") is not None else match.group(0)

    text = re.sub(r"  +", " ", PLACEHOLDER.sub(one, template))
    return text[:1].upper() + text[1:]


def _regexes(where: str, entry: dict[str, Any], key: str) -> tuple[re.Pattern[str], ...]:
    value = entry.get(key) or []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise CatalogueError(f"{where}: '{key}' must be a list of regular expressions.")
    try:
        return tuple(re.compile(v) for v in value)
    except re.error as exc:
        raise CatalogueError(f"{where}: a '{key}' pattern is not a regular expression ({exc}).") from None


def _strings(where: str, entry: dict[str, Any], key: str) -> tuple[str, ...]:
    value = entry.get(key) or []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise CatalogueError(f"{where}: '{key}' must be a list of strings.")
    return tuple(value)


def _unknown(where: str, entry: dict[str, Any], allowed: set[str]) -> None:
    extra = sorted(set(entry) - allowed)
    if extra:
        raise CatalogueError(f"{where}: unknown key '{extra[0]}'; the keys are {', '.join(sorted(allowed))}.")


def parse(
    name: str, text: str
) -> tuple[str, list[Signature], list[Benign], dict[str, tuple[re.Pattern[str], ...]]]:
    """One catalogue file's entries; CatalogueError naming the file and entry on a bad one."""
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise CatalogueError(f"{name} is not valid YAML ({exc}).") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("family"), str):
        raise CatalogueError(f"{name}: the file must be a mapping with a 'family'.")
    _unknown(name, doc, FILE_KEYS)
    family = doc["family"]
    facts = {str(k): _regexes(f"{name} facts", doc["facts"], k) for k in (doc.get("facts") or {})}
    benign = []
    for index, entry in enumerate(doc.get("benign") or []):
        where = f"{name} benign[{index}]"
        if not isinstance(entry, dict) or not isinstance(entry.get("match"), str) or not entry.get("why"):
            raise CatalogueError(f"{where}: an entry needs 'match' and 'why'.")
        _unknown(where, entry, BENIGN_KEYS)
        benign.append(
            Benign(
                family,
                _regexes(where, entry, "match")[0],
                str(entry["why"]),
                _strings(where, entry, "learnt_from"),
            )
        )
    signatures = []
    for index, entry in enumerate(doc.get("signatures") or []):
        where = f"{name} signatures[{index}]"
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
            raise CatalogueError(f"{where}: an entry needs an 'id'.")
        where = f"{name} signature {entry['id']}"
        _unknown(where, entry, SIGNATURE_KEYS)
        rule = str(entry.get("rule") or "catalogue")
        for key in ("rank", "sentence", "action") if rule == "catalogue" else ():
            if key not in entry:
                raise CatalogueError(f"{where}: '{key}' is missing.")
        if rule == "catalogue" and not entry.get("match"):
            raise CatalogueError(f"{where}: 'match' is missing.")
        if not isinstance(entry.get("rank", 0), int):
            raise CatalogueError(f"{where}: 'rank' must be a whole number.")
        signatures.append(
            Signature(
                id=entry["id"],
                family=family,
                rank=int(entry.get("rank", 0)),
                match=_regexes(where, entry, "match"),
                sentence=str(entry.get("sentence", "")),
                action=str(entry.get("action", "")),
                needs=_regexes(where, entry, "needs"),
                unless=_regexes(where, entry, "unless"),
                kernel=bool(entry.get("kernel", False)),
                meaning=str(entry.get("meaning", "")),
                explains=_regexes(where, entry, "explains"),
                learnt_from=_strings(where, entry, "learnt_from"),
                fires=_strings(where, entry, "fires"),
                near_misses=_strings(where, entry, "near_misses"),
                rule=rule,
                causes=_strings(where, entry, "causes"),
            )
        )
    return family, signatures, benign, facts


def _files() -> list[tuple[str, str]]:
    from npu_accept import families

    return [(f"{package}/signatures.yaml", text) for package, text in families.data_files("signatures.yaml")]


@functools.cache
def load() -> Catalogue:
    """Every family's catalogue, in one (read once per process)."""
    signatures: list[Signature] = []
    benign: list[Benign] = []
    facts: dict[str, tuple[re.Pattern[str], ...]] = {}
    seen: dict[str, str] = {}
    for name, text in _files():
        _, sigs, harmless, found = parse(name, text)
        for sig in sigs:
            if sig.id in seen:
                raise CatalogueError(f"{name}: signature {sig.id} is also in {seen[sig.id]}; ids are unique.")
            seen[sig.id] = name
        signatures += sigs
        benign += harmless
        for key, patterns in found.items():
            facts[key] = facts.get(key, ()) + patterns
    return Catalogue(tuple(signatures), tuple(benign), facts)

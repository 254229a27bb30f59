# SPDX-License-Identifier: MIT
"""Which converter / toolkit made a model, which runtime is on the board, and whether they pair.

One table for both users: `npu-diagnose` (a converter print-out, a runtime log) and check 10
(the model on the board against the runtime on the board).  `KNOWN_PAIRINGS` is read from the
family packages' `versions.yaml` files (`npu_accept.families`); each row names its upstream file
and commit and whether it is confirmed; the rules below only state what confirmed rows state:

The rules that read a family's own formats live in its package: `npu_accept.families.neutron.pairing`
(the Neutron SDK's name against the kernel), `npu_accept.families.rknpu.pairing` (the .rknn
header, the toolkit against librknnrt).  What they state:

- Neutron: NXP names each Neutron SDK after the BSP it belongs to, `NeutronSDK_<sdk>+LF_<bsp>`;
  a model converted with an SDK of another BSP release than the board's is not made for the
  board's driver, firmware and delegate.
- RKNN: the RKNN SDK user guide (v2.3.2, section 2.2.3 note 4) asks for rknn_server, librknnrt
  and RKNN-Toolkit2 of one release.  The board logs in the table show format-6 models (toolkit
  2.3.0 and one unnamed) refused by librknnrt 1.x at rknn_init with "Invalid RKNN model version
  6"; that any runtime older than the toolkit refuses its models is our generalisation of those
  logs, so the finding says the pair is unsupported, not that the runtime will refuse it.
- RKNPU driver: a runtime release whose own documentation requires a newer RKNPU kernel driver
  than the board's (`needs_driver` of a confirmed row, e.g. the RKLLM SDK guide of each rknn-llm
  release); a driver that is only recommended (`recommends_driver`) is never asserted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import yaml

KERNEL_RELEASE = re.compile(r"(?P<kernel>\d+\.\d+\.\d+)")


@dataclass(frozen=True)
class Pairing:
    """A combination known to belong together (or not), and where that is written.

    The rows live in `npu_accept/families/<family>/versions.yaml` (read by `load_versions`): each
    names its upstream file (`url`) and the commit or tag it was read at (`commit`), or the public
    thread it comes from.  A row with `confirmed` false could not be confirmed: it is kept as data
    and in docs/PROVENANCE.md, and no finding or check ever asserts it."""

    family: str
    component: str
    version: str
    pairs_with: str
    source: str
    kind: str = ""
    url: str | None = None
    commit: str | None = None
    confirmed: bool = True
    note: str = ""
    also: tuple[str, ...] = ()
    bsp: str | None = None
    needs_driver: str | None = None  # the RKNPU driver the runtime's own release documents as required
    recommends_driver: str | None = None  # only recommended: never asserted


class VersionsError(Exception):
    """A versions.yaml file is malformed; the message names the file, the row and the fix."""


ROW_KEYS = {
    "kind",
    "component",
    "version",
    "pairs_with",
    "source",
    "url",
    "commit",
    "confirmed",
    "note",
    "also",
    "bsp",
    "needs_driver",
    "recommends_driver",
}
ROW_REQUIRED = ("kind", "component", "version", "pairs_with", "source", "confirmed")
COMMIT = re.compile(r"^[0-9a-f]{40}$")


def parse_versions(name: str, text: str) -> tuple[str, list[Pairing]]:
    """One versions.yaml file's rows; VersionsError naming the file and row on a bad one."""
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise VersionsError(f"{name} is not valid YAML ({exc}).") from None
    if (
        not isinstance(doc, dict)
        or not isinstance(doc.get("family"), str)
        or not isinstance(doc.get("rows"), list)
    ):
        raise VersionsError(f"{name}: the file must be a mapping with a 'family' and a list of 'rows'.")
    extra = sorted(set(doc) - {"family", "rows"})
    if extra:
        raise VersionsError(f"{name}: unknown key '{extra[0]}'; the keys are family, rows.")
    rows = []
    for index, entry in enumerate(doc["rows"]):
        where = f"{name} rows[{index}]"
        if not isinstance(entry, dict):
            raise VersionsError(f"{where}: a row must be a mapping.")
        unknown = sorted(set(entry) - ROW_KEYS)
        if unknown:
            raise VersionsError(
                f"{where}: unknown key '{unknown[0]}'; the keys are {', '.join(sorted(ROW_KEYS))}."
            )
        missing = [k for k in ROW_REQUIRED if k not in entry]
        if missing:
            raise VersionsError(f"{where}: '{missing[0]}' is missing.")
        if not isinstance(entry["confirmed"], bool):
            raise VersionsError(f"{where}: 'confirmed' must be true or false.")
        commit = entry.get("commit")
        if commit is not None and not COMMIT.match(str(commit)):
            raise VersionsError(f"{where}: 'commit' must be the 40-hex commit the source was read at.")
        if not entry["confirmed"] and not entry.get("note"):
            raise VersionsError(f"{where}: an unconfirmed row needs a 'note' saying what is not confirmed.")
        also = entry.get("also") or []
        if not isinstance(also, list):
            raise VersionsError(f"{where}: 'also' must be a list of URLs.")
        rows.append(
            Pairing(
                family=doc["family"],
                component=str(entry["component"]),
                version=str(entry["version"]),
                pairs_with=str(entry["pairs_with"]),
                source=str(entry["source"]),
                kind=str(entry["kind"]),
                url=str(entry["url"]) if entry.get("url") else None,
                commit=str(commit) if commit else None,
                confirmed=entry["confirmed"],
                note=str(entry.get("note") or ""),
                also=tuple(str(a) for a in also),
                bsp=str(entry["bsp"]) if entry.get("bsp") else None,
                needs_driver=str(entry["needs_driver"]) if entry.get("needs_driver") else None,
                recommends_driver=str(entry["recommends_driver"]) if entry.get("recommends_driver") else None,
            )
        )
    return doc["family"], rows


def load_versions() -> tuple[Pairing, ...]:
    """Every family package's versions.yaml rows, in the packages' order."""
    from npu_accept import families

    rows: list[Pairing] = []
    for package, text in families.data_files("versions.yaml"):
        name = f"{package}/versions.yaml"
        family, found = parse_versions(name, text)
        if family != families.family_name(package):
            raise VersionsError(
                f"{name}: family '{family}' is not the package's ({families.family_name(package)})."
            )
        rows += found
    return tuple(rows)


KNOWN_PAIRINGS: tuple[Pairing, ...] = load_versions()


def driver_requirement(component: str, version: str | None) -> Pairing | None:
    """The confirmed row that documents the RKNPU driver COMPONENT VERSION needs (None if none)."""
    for row in KNOWN_PAIRINGS:
        if row.confirmed and row.needs_driver and row.component == component and row.version == version:
            return row
    return None


def kernel_version(release: str | None) -> str | None:
    """'6.12.49-lts-next-g759f4038100f' -> '6.12.49'."""
    match = KERNEL_RELEASE.search(release or "")
    return match.group("kernel") if match else None


def known_delegate_bsp(version: str | None) -> str | None:
    """The BSP a Neutron delegate version string belongs to, from the table (None when unknown)."""
    if not version:
        return None
    for row in KNOWN_PAIRINGS:
        if row.kind != "neutron-delegate" or not row.confirmed:
            continue
        if row.version == version or (len(version) >= 8 and row.version.startswith(version.split("-")[-1])):
            return row.pairs_with
    return None


def version_tuple(text: str | None) -> tuple[int, ...] | None:
    match = re.search(r"(\d+(?:\.\d+)+)", text or "")
    return tuple(int(p) for p in match.group(1).split(".")) if match else None


def versions_table(rows: tuple[Pairing, ...] | None = None) -> str:
    """The "Version knowledge" table of docs/PROVENANCE.md, made from the versions.yaml rows."""
    lines = [
        "| family | component | version | pairs with | source | confirmed |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for row in KNOWN_PAIRINGS if rows is None else rows:
        where = row.source
        if row.url:
            where += f"; <{row.url}>" + (f" (commit {row.commit})" if row.commit else "")
        where += "".join(f"; <{url}>" for url in row.also)
        confirmed = "yes" if row.confirmed else f"**no**: {row.note}"
        cells = (row.family, row.component, f"`{row.version}`", row.pairs_with, where, confirmed)
        lines.append("| " + " | ".join(" ".join(str(c).split()).replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":  # python3 -m npu_accept.diagnose.pairings: the table for docs/PROVENANCE.md
    print(versions_table(), end="")

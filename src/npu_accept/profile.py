# SPDX-License-Identifier: MIT
"""Board profiles (`npu-profile/1`): load a YAML file, validate it, give typed records.

`load_profile(name_or_path, search)` accepts a profile name (a file `<name>.yaml` in one of the
search directories; by default `npu_accept.paths.profile_dirs()`: the user's, then the shipped
ones) or a path to a YAML file.  Every problem ends in a `ProfileError`
whose message is one sentence naming the file and the key, so the pytest plugin can print it
and exit without a traceback.
"""

from __future__ import annotations

import difflib
import functools
import os
import stat
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from npu_target.families import DMA_POOL, ION, NO_MEMORY, SRAM, family

from npu_accept.compare import DEFAULT_THRESHOLDS
from npu_accept.memo import shared
from npu_accept.npyio import NpyError, read_header
from npu_accept.paths import packaged_profiles_dir, profile_dirs
from npu_accept.validation import Validator

if TYPE_CHECKING:
    import jsonschema


class ProfileError(Exception):
    """A profile cannot be used; the message is one sentence naming the file, the key and the fix."""


class Section(Mapping[str, Any]):
    """A closed profile section (a frozen dataclass) that also reads as the mapping it was loaded
    from: ``section.get("key", default)`` and ``{**section}`` see the keys the profile gave
    (a field left None reads as absent), so callers written for the YAML mapping keep working."""

    def __getitem__(self, key: str) -> Any:
        if key not in _field_names(type(self)):
            raise KeyError(key)
        value = getattr(self, key)
        if value is None:
            raise KeyError(key)
        return value

    def __iter__(self) -> Iterator[str]:
        return (name for name in _field_names(type(self)) if getattr(self, name) is not None)

    def __len__(self) -> int:
        return sum(1 for _ in self)


def _field_names(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in fields(cls))


@dataclass(frozen=True)
class RandomInput:
    shape: tuple[int, ...]
    dtype: str
    low: float
    high: float
    seed: int


@dataclass(frozen=True)
class FileInput:
    path: Path


InputSpec = RandomInput | FileInput


@dataclass(frozen=True)
class ModelSpec:
    name: str
    path: str  # the model the NPU runs, on the board
    reference: str | None  # the unconverted model the CPU runs, on the board (None: same file)
    backend: str  # backend of the NPU run
    golden: tuple[Path, ...]  # host .npy files with the expected outputs, in output order
    inputs: tuple[InputSpec, ...]
    thresholds: dict[str, float]


@dataclass(frozen=True)
class SocSpec:
    soc_id: str | None = None
    compatible: tuple[str, ...] = ()
    chip_id: str | None = None
    revisions_ok: tuple[str, ...] = ()
    revisions_bad: dict[str, str] = field(default_factory=dict)
    bad_reason: str | None = None


@dataclass(frozen=True)
class DriverSpec:
    name: str
    min_version: str | None = None
    devices: tuple[str, ...] = ()
    firmware: str | None = None
    match_manifest: bool = True


@dataclass(frozen=True)
class DelegateSpec:
    path: str
    options: dict[str, str] = field(default_factory=dict)
    min_nodes: int = 1
    required_custom_op: str | None = None
    allow_xnnpack: bool = False


@dataclass(frozen=True)
class PerformanceSpec:
    runs: int
    warmup: int
    min_speedup: float
    regression_tolerance: float
    # Latency the speedup and the regression rules compare: p50 (default) or the fastest run
    # ("min"), which a shared or loaded host (a board twin on a CI runner) disturbs far less.
    statistic: str = "p50"


@dataclass(frozen=True)
class RuntimeSpec(Section):
    """Check 3: the NPU runtime library (npu-info finds it; `name` is what sentences call it)."""

    name: str
    path: str | None = None


@dataclass(frozen=True)
class DaemonSpec(Section):
    """Check 3: the NPU daemon, and whether its supervisor must restart it after a kill."""

    name: str
    path: str | None = None
    restart_check: bool | None = None
    restart_timeout_s: float | None = None


@dataclass(frozen=True)
class MemorySpec(Section):
    """Check 6: exactly the key of the family's memory kind (MEMORY_KEYS) is given."""

    pool_min_bytes: int | None = None  # neutron: the reserved DMA pool, at least
    sram_bytes: int | None = None  # rknpu: the NPU SRAM, exactly
    ion_min_bytes: int | None = None  # cvitek-tpu: the ION carveout, at least


@dataclass(frozen=True)
class FlashSection(Section):
    """npu-flash's `flash:` section as the schema closes it; npu_accept.flash.spec turns it into a
    FlashSpec (defaults, the method's required keys)."""

    method: str
    uuu_script: str | None = None
    boot_container: str | None = None
    ele_container: str | None = None
    soc_revisions: dict[str, str] | None = None
    loader: str | None = None
    sector: int | None = None


@dataclass(frozen=True)
class KernelLogSpec(Section):
    allow: tuple[str, ...] = ()  # check 8: regular expressions of kernel lines that are no fault


@dataclass(frozen=True)
class DeterminismSpec(Section):
    runs: int | None = None  # check 9: runs of each model compared with each other


@dataclass(frozen=True)
class PairingSpec(Section):
    converter: str | None = None  # check 10: "NeutronSDK_…+LF_…"


@dataclass(frozen=True)
class Profile:
    name: str
    source: Path
    family: str
    soc: SocSpec
    driver: DriverSpec | None
    delegate: DelegateSpec | None
    models: tuple[ModelSpec, ...]
    performance: PerformanceSpec
    runtime: RuntimeSpec | None = None
    daemon: DaemonSpec | None = None
    memory: MemorySpec | None = None
    flash: FlashSection | None = None
    description: str = ""
    kernel_log: KernelLogSpec | None = None
    determinism: DeterminismSpec | None = None
    pairing: PairingSpec | None = None

    @property
    def has_npu(self) -> bool:
        return self.family != "none"


# Check 6 judges one key per memory kind of npu_target.families (Family.memory).
MEMORY_KEYS = {DMA_POOL: "pool_min_bytes", SRAM: "sram_bytes", ION: "ion_min_bytes", NO_MEMORY: None}
# Sections a board with an NPU must state, null included: a check is not applicable because the
# profile says so (`memory: null`), never because a key is missing or misspelled.
STATED_SECTIONS = ("driver", "delegate", "runtime", "daemon", "memory")
# A profile file is read whole before parsing; no real profile comes near this.
MAX_PROFILE_BYTES = 1 << 20
# Output thresholds below these floors pass a constant or shifted output (compare.py's metrics:
# cosine is blind to offset and scale; euclid <= 0 and SQNR <= 0 dB allow an error as large as
# the signal; top-k agreement 0 asks for nothing).
THRESHOLD_FLOORS = {"cosine": 0.5, "euclid": 0.0, "sqnr_db": 0.0, "top_k_agree": 0.0}


@shared()
def profile_schema() -> dict[str, Any]:
    """The JSON schema of `npu-profile/1` shipped in the package."""
    from npu_accept import schemaload

    return schemaload.load("profile")


@shared()
def _profile_validator() -> Validator:
    return Validator(profile_schema())


def resolve_profile_path(name_or_path: str, search: Path | Sequence[Path] | None = None) -> Path:
    """The YAML file meant by `--board`: an existing path, or the first `<dir>/<name>.yaml`."""
    dirs = profile_dirs() if search is None else [search] if isinstance(search, Path) else list(search)
    candidate = Path(name_or_path)
    if candidate.suffix in (".yaml", ".yml") or "/" in name_or_path:
        if candidate.is_file():
            return candidate
        if candidate.exists():
            raise ProfileError(f"Board profile {name_or_path} is not a regular file; give a YAML file.")
        raise ProfileError(
            f"Board profile file {name_or_path} does not exist; "
            "give an existing YAML file or the name of a profile (npu-accept profiles lists them)."
        )
    for directory in dirs:
        path = directory / f"{name_or_path}.yaml"
        if path.is_file():
            return path
    known = ", ".join(profile_names(dirs)) or "none"
    raise ProfileError(
        f"Unknown board profile '{name_or_path}'; use one of: {known}, or give the path of a YAML profile."
    )


def profile_names(search: Sequence[Path] | None = None) -> list[str]:
    """The profile names found in the search directories, sorted."""
    dirs = profile_dirs() if search is None else search
    return sorted({p.stem for d in dirs if d.is_dir() for p in d.glob("*.yaml")})


def load_profile(name_or_path: str, search: Path | Sequence[Path] | None = None) -> Profile:
    """Load and validate a profile; raises ProfileError with one sentence on any problem."""
    path = resolve_profile_path(name_or_path, search)
    data = _parse(path, _read_capped(path))
    if not isinstance(data, dict):
        raise ProfileError(f"Board profile {path} must be a YAML mapping with the keys of npu-profile/1.")
    validate_profile_data(data, path)
    return _build(data, path)


def _read_capped(path: Path) -> str:
    """The file's text, read only if it is a regular file of at most MAX_PROFILE_BYTES (a FIFO
    is never opened for a blocking read)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise ProfileError(
            f"Board profile {path} cannot be read ({exc.strerror or exc}); check the file."
        ) from None
    with os.fdopen(fd, "rb") as stream:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ProfileError(f"Board profile {path} is not a regular file; give a YAML file.")
        raw = stream.read(MAX_PROFILE_BYTES + 1)
    if len(raw) > MAX_PROFILE_BYTES:
        raise ProfileError(
            f"Board profile {path} is larger than {MAX_PROFILE_BYTES >> 20} MiB, far more than any "
            "profile needs; give the board's profile, not another file."
        )
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ProfileError(
            f"Board profile {path} is not UTF-8 text ({exc.reason}); save it as UTF-8."
        ) from None


class _AliasUsed(Exception):
    def __init__(self, line: int) -> None:
        super().__init__(line)
        self.line = line


class _NoAliases(yaml.SafeLoader):
    """PyYAML's safe loader refusing aliases (`*name`): a profile needs none, and nested aliases
    expand exponentially (the "billion laughs")."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()  # type: ignore[no-untyped-call]  # unannotated in types-PyYAML
            raise _AliasUsed(event.start_mark.line + 1)
        return super().compose_node(parent, index)


def _parse(path: Path, text: str) -> Any:
    try:
        return yaml.load(text, Loader=_NoAliases)  # noqa: S506 (a SafeLoader)
    except _AliasUsed as exc:
        raise ProfileError(
            f"Board profile {path} uses a YAML alias at line {exc.line}; write the value out "
            "(a profile takes no aliases)."
        ) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise ProfileError(f"Board profile {path} is not valid YAML{where}; fix the syntax there.") from None
    except RecursionError:
        raise ProfileError(
            f"Board profile {path} nests too deeply; a profile is a few levels deep."
        ) from None


def validate_profile_data(data: dict[str, Any], path: Path) -> None:
    """Raise ProfileError naming the file and key of the first unknown key, else of the most
    relevant schema violation, else of a requirement of the family that is not stated."""
    unknown = _unknown_key(data, profile_schema(), "")
    if unknown is not None:
        key, valid = unknown
        raise ProfileError(
            f"Board profile {path}: key '{key}' is invalid (unknown key); {_nearest(key, valid)}."
        )
    error = _profile_validator().best_error(data)
    if error is not None:
        raise ProfileError(
            f"Board profile {path}: key '{_key_path(error)}' is invalid ({_reason(error)}); "
            "fix it as docs/acceptance.md 'Profile keys' describes."
        )
    _check_family(data, path)
    _check_thresholds(data, path)


def _unknown_key(data: Any, schema: Mapping[str, Any], where: str) -> tuple[str, list[str]] | None:
    """The first key of `data` a closed object of `schema` does not list, with the valid keys."""
    if isinstance(data, dict) and "properties" in schema:
        props = schema["properties"]
        for key in data:
            if key not in props and schema.get("additionalProperties") is False:
                return (f"{where}.{key}" if where else str(key)), sorted(props)
        for key, value in data.items():
            if key in props:
                found = _unknown_key(value, props[key], f"{where}.{key}" if where else str(key))
                if found:
                    return found
    elif isinstance(data, list) and isinstance(schema.get("items"), Mapping):
        for index, item in enumerate(data):
            found = _unknown_key(item, schema["items"], f"{where}[{index}]")
            if found:
                return found
    return None


def _nearest(key: str, valid: Sequence[str]) -> str:
    last = key.rsplit(".", 1)[-1]
    close = difflib.get_close_matches(last, valid, n=1, cutoff=0.5)
    listed = ", ".join(valid) or "none"
    if close:
        return f"the nearest valid key is '{close[0]}' (valid here: {listed})"
    return f"valid here: {listed}"


def _check_family(data: dict[str, Any], path: Path) -> None:
    """What the family's checks need is stated: every section of STATED_SECTIONS is given (null
        says "not applicable"), memory names exactly the family's key, and the sections the family's
    package requires (`PROFILE_SECTIONS`, e.g. neutron's pairing) are stated."""
    name = data["family"]
    described = family(name)
    if name == "none" or described is None:
        return
    for section in STATED_SECTIONS:
        if section not in data:
            raise ProfileError(
                f"Board profile {path}: key '{section}' is missing; a {name} board's checks need it — "
                f"give it, or write '{section}: null' to say the board has none."
            )
    memory, wanted = data["memory"], MEMORY_KEYS.get(described.memory)
    if isinstance(memory, dict):
        for key in memory:
            if key != wanted:
                hint = f"use 'memory.{wanted}'" if wanted else "write 'memory: null'"
                raise ProfileError(
                    f"Board profile {path}: key 'memory.{key}' is invalid (not a key of family {name}); "
                    f"{hint}."
                )
        if wanted is not None and wanted not in memory:
            raise ProfileError(
                f"Board profile {path}: key 'memory.{wanted}' is missing; the memory check of a {name} "
                "board judges it — give it, or write 'memory: null' to say the check does not apply."
            )
    for key, why in _family_sections(name).items():
        if key not in data:
            raise ProfileError(
                f"Board profile {path}: key '{key}' is missing; {why} — give it, or "
                f"write '{key}: null' to say the check does not apply."
            )


def _family_sections(name: str) -> dict[str, str]:
    """The sections a family's package says its profiles must state (`PROFILE_SECTIONS`)."""
    from npu_accept import families

    return families.profile_sections(name)


def _check_thresholds(data: dict[str, Any], path: Path) -> None:
    for index, model in enumerate(data["models"]):
        for key, floor in THRESHOLD_FLOORS.items():
            value = (model.get("thresholds") or {}).get(key)
            if value is not None and value <= floor:
                raise ProfileError(
                    f"Board profile {path}: key 'models[{index}].thresholds.{key}' is {value}, which a "
                    f"constant or shifted output passes; give more than {floor:g} "
                    f"(the default is {DEFAULT_THRESHOLDS.get(key, 0):g})."
                )


def _key_path(error: jsonschema.ValidationError) -> str:
    parts: list[str] = []
    for item in error.absolute_path:
        if isinstance(item, int):
            parts.append(f"[{item}]")
        else:
            parts.append(("." if parts else "") + str(item))
    key = "".join(parts)
    if error.validator == "additionalProperties":
        schema = error.schema if isinstance(error.schema, Mapping) else {}
        instance = error.instance if isinstance(error.instance, Mapping) else {}
        extra = sorted(set(instance) - set(schema.get("properties", {})))
        key = ".".join(filter(None, [key, extra[0] if extra else ""]))
    elif error.validator == "required":
        required = error.validator_value if isinstance(error.validator_value, list) else []
        present = error.instance if isinstance(error.instance, Mapping) else {}
        missing = [k for k in required if k not in present]
        key = ".".join(filter(None, [key, missing[0] if missing else ""]))
    return key or "(top level)"


def _reason(error: jsonschema.ValidationError) -> str:
    if error.validator == "additionalProperties":
        return "unknown key"
    if error.validator == "required":
        return "missing"
    if error.validator in ("minProperties", "maxProperties") and error.absolute_path:
        return "give exactly one of random or file"
    message = error.message
    return message if len(message) <= 120 else message[:117] + "..."


def _build(data: dict[str, Any], path: Path) -> Profile:
    soc = data.get("soc") or {}
    driver = data.get("driver")
    delegate = data.get("delegate")
    perf = data["performance"]
    models = tuple(_model(i, m, data, path) for i, m in enumerate(data["models"]))
    names = [m.name for m in models]
    duplicate = next((n for n in names if names.count(n) > 1), None)
    if duplicate:
        raise ProfileError(
            f"Board profile {path}: key 'models' names model '{duplicate}' twice; "
            "give each model a unique name."
        )
    return Profile(
        name=data["name"],
        source=path,
        family=data["family"],
        description=data.get("description", ""),
        soc=SocSpec(
            soc_id=soc.get("soc_id"),
            compatible=tuple(soc.get("compatible", ())),
            chip_id=None if soc.get("chip_id") is None else str(soc["chip_id"]),
            revisions_ok=tuple(soc.get("revisions_ok", ())),
            revisions_bad=dict(soc.get("revisions_bad", {})),
            bad_reason=soc.get("bad_reason"),
        ),
        driver=None
        if driver is None
        else DriverSpec(
            name=driver["name"],
            min_version=driver.get("min_version"),
            devices=tuple(driver.get("devices", ())),
            firmware=driver.get("firmware"),
            match_manifest=driver.get("match_manifest", True),
        ),
        delegate=None
        if delegate is None
        else DelegateSpec(
            path=delegate["path"],
            options={k: str(v) for k, v in (delegate.get("options") or {}).items()},
            min_nodes=delegate.get("min_nodes", 1),
            required_custom_op=delegate.get("required_custom_op"),
            allow_xnnpack=delegate.get("allow_xnnpack", False),
        ),
        models=models,
        performance=PerformanceSpec(
            runs=perf["runs"],
            warmup=perf["warmup"],
            min_speedup=float(perf["min_speedup"]),
            regression_tolerance=float(perf["regression_tolerance"]),
            statistic=perf.get("statistic", "p50"),
        ),
        runtime=_section(RuntimeSpec, data.get("runtime")),
        daemon=_section(DaemonSpec, data.get("daemon")),
        memory=_section(MemorySpec, data.get("memory")),
        flash=_section(FlashSection, data.get("flash")),
        kernel_log=_section(KernelLogSpec, data.get("kernel_log")),
        determinism=_section(DeterminismSpec, data.get("determinism")),
        pairing=_section(PairingSpec, data.get("pairing")),
    )


def _section(kind: type[Any], raw: dict[str, Any] | None) -> Any:
    """The section's dataclass (the schema has closed it), lists as tuples; None for null."""
    if raw is None:
        return None
    return kind(**{k: tuple(v) if isinstance(v, list) else v for k, v in raw.items()})


def _model(index: int, entry: dict[str, Any], data: dict[str, Any], path: Path) -> ModelSpec:
    inputs: list[InputSpec] = []
    for number, item in enumerate(entry["inputs"]):
        if "random" in item:
            spec = item["random"]
            low, high = spec.get("low", 0), spec.get("high", 255 if spec["dtype"] == "uint8" else 1)
            inputs.append(
                RandomInput(
                    tuple(spec["shape"]),
                    spec["dtype"],
                    float(low),
                    float(high),
                    int(spec.get("seed", number)),
                )
            )
        else:
            key = f"models.{entry['name']}.inputs[{number}].file"
            inputs.append(FileInput(_data_file(path, key, item["file"])))
    golden = tuple(
        _data_file(path, f"models.{entry['name']}.golden[{number}]", g)
        for number, g in enumerate(entry.get("golden") or ())
    )
    described = family(data["family"])
    default_backend = described.backend if described else "tflite-cpu"
    return ModelSpec(
        name=entry["name"],
        path=entry["path"],
        reference=entry.get("reference"),
        backend=entry.get("backend", default_backend),
        golden=golden,
        inputs=tuple(inputs),
        thresholds={k: float(v) for k, v in entry["thresholds"].items()},
    )


@functools.cache
def _shipped_link_targets() -> frozenset[Path]:
    shipped = packaged_profiles_dir()
    return frozenset(p.resolve() for p in shipped.rglob("*.npy") if p.is_symlink())


def _data_file(path: Path, key: str, given: str) -> Path:
    """A host .npy file a profile names: inside the profile's directory or the shipped profiles'
    (a profile never reads other host files), existing, with a header npu-compare accepts.

    In a checkout the shipped RKNN inputs and goldens are links to the one copy in the layer's
    recipe files: what those links point at counts as shipped."""
    file = (path.parent / given).resolve()
    roots = (path.parent.resolve(), packaged_profiles_dir().resolve())
    if file not in _shipped_link_targets() and not any(file.is_relative_to(root) for root in roots):
        raise ProfileError(
            f"Board profile {path}: key '{key}' points at {file}, outside the profile's directory "
            f"{roots[0]}; put the .npy file beside the profile and name it relative to it."
        )
    if not file.is_file():
        raise ProfileError(
            f"Board profile {path}: key '{key}' points at {file}, which does not exist; "
            "give an existing .npy file."
        )
    try:
        read_header(file)
    except NpyError as exc:
        raise ProfileError(f"Board profile {path}: key '{key}': {str(exc).rstrip('.')}.") from None
    return file

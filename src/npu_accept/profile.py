# SPDX-License-Identifier: MIT
"""Board profiles (`npu-profile/1`): load a YAML file, validate it, give typed records.

`load_profile(name_or_path, search)` accepts a profile name (a file `<name>.yaml` in one of the
search directories; by default `npu_accept.paths.profile_dirs()`: the user's, then the shipped
ones) or a path to a YAML file.  Every problem ends in a `ProfileError`
whose message is one sentence naming the file and the key, so the pytest plugin can print it
and exit without a traceback.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from npu_target.families import family

from npu_accept.memo import shared
from npu_accept.paths import profile_dirs
from npu_accept.validation import Validator

if TYPE_CHECKING:
    import jsonschema


class ProfileError(Exception):
    """A profile cannot be used; the message is one sentence naming the file, the key and the fix."""


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
class Profile:
    name: str
    source: Path
    family: str
    soc: SocSpec
    driver: DriverSpec | None
    delegate: DelegateSpec | None
    models: tuple[ModelSpec, ...]
    performance: PerformanceSpec
    runtime: dict[str, Any] | None = None
    daemon: dict[str, Any] | None = None
    memory: dict[str, Any] | None = None
    flash: dict[str, Any] | None = None
    description: str = ""
    kernel_log: dict[str, Any] | None = None  # check 8: {allow: [regex, …]}
    determinism: dict[str, Any] | None = None  # check 9: {runs: N}
    pairing: dict[str, Any] | None = None  # check 10: {converter: "NeutronSDK_…+LF_…"}

    @property
    def has_npu(self) -> bool:
        return self.family != "none"


@shared()
def profile_schema() -> dict[str, Any]:
    """The JSON schema of `npu-profile/1` shipped in the package."""
    text = resources.files("npu_accept").joinpath("schemas/profile.schema.json").read_text()
    return json.loads(text)


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
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise ProfileError(f"Board profile {path} is not valid YAML{where}; fix the syntax there.") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ProfileError(f"Board profile {path} cannot be read ({exc}); check the file.") from None
    if not isinstance(data, dict):
        raise ProfileError(f"Board profile {path} must be a YAML mapping with the keys of npu-profile/1.")
    validate_profile_data(data, path)
    return _build(data, path)


def validate_profile_data(data: dict[str, Any], path: Path) -> None:
    """Raise ProfileError naming the file and key of the most relevant schema violation."""
    error = _profile_validator().best_error(data)
    if error is None:
        return
    key = _key_path(error)
    raise ProfileError(
        f"Board profile {path}: key '{key}' is invalid ({_reason(error)}); "
        "fix it as docs/design.md 'Board profiles' describes."
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
        extra = sorted(set(error.instance) - set(error.schema.get("properties", {})))
        key = ".".join(filter(None, [key, extra[0] if extra else ""]))
    elif error.validator == "required":
        missing = [k for k in error.validator_value if k not in error.instance]
        key = ".".join(filter(None, [key, missing[0] if missing else ""]))
    return key or "(top level)"


def _reason(error: jsonschema.ValidationError) -> str:
    if error.validator == "additionalProperties":
        return "unknown key"
    if error.validator == "required":
        return "missing"
    message = error.message
    return message if len(message) <= 120 else message[:117] + "..."


def _build(data: dict[str, Any], path: Path) -> Profile:
    soc = data.get("soc") or {}
    driver = data.get("driver")
    delegate = data.get("delegate")
    perf = data["performance"]
    models = tuple(_model(m, data, path) for m in data["models"])
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
        runtime=data.get("runtime"),
        daemon=data.get("daemon"),
        memory=data.get("memory"),
        flash=data.get("flash"),
        kernel_log=data.get("kernel_log"),
        determinism=data.get("determinism"),
        pairing=data.get("pairing"),
    )


def _model(entry: dict[str, Any], data: dict[str, Any], path: Path) -> ModelSpec:
    inputs: list[InputSpec] = []
    for index, item in enumerate(entry["inputs"]):
        if "random" in item:
            spec = item["random"]
            low, high = spec.get("low", 0), spec.get("high", 255 if spec["dtype"] == "uint8" else 1)
            inputs.append(
                RandomInput(
                    tuple(spec["shape"]), spec["dtype"], float(low), float(high), int(spec.get("seed", index))
                )
            )
        else:
            file = (path.parent / item["file"]).resolve()
            if not file.is_file():
                raise ProfileError(
                    f"Board profile {path}: key 'models.{entry['name']}.inputs[{index}].file' "
                    f"points at {file}, which does not exist; give an existing .npy file."
                )
            inputs.append(FileInput(file))
    golden = tuple((path.parent / g).resolve() for g in entry.get("golden") or ())
    for index, file in enumerate(golden):
        if not file.is_file():
            raise ProfileError(
                f"Board profile {path}: key 'models.{entry['name']}.golden[{index}]' "
                f"points at {file}, which does not exist; give an existing .npy file."
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

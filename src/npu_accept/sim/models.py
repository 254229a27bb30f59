# SPDX-License-Identifier: MIT
"""The real model and photograph the simulated i.MX95 boards run, shipped with the package.

- face_detection_short_range.tflite: MediaPipe's short-range face detector, taken unchanged from
  the PyPI wheel mediapipe==0.10.14 (mediapipe/modules/face_detection/), Apache-2.0; its licence
  text is face_detection_short_range.LICENSE beside it (docs/PROVENANCE.md).
- the photograph: scikit-image's astronaut photograph (NASA, public domain; scikit-image 0.26.0
  skimage.data.astronaut()) resized to the detector's 128x128 input with anti-aliasing
  (skimage.transform.resize) and scaled to [-1, 1]: float32 [1, 128, 128, 3]. One copy: the RKNN
  profiles' input file (profiles/rknn/face_detection_short_range.in0.npy), which the boards'
  models are judged on too.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from npu_accept.paths import DataMissing, packaged_profiles_dir, sim_dir

FACE_DETECTOR_SHA256 = "bbff11cebd1eb27a1e004cae0b0e63ec8c551cbf34a4451148b4908b8db3eca8"


def face_detector() -> Path:
    """The face detector .tflite, checked against its sha256 (a damaged install says so)."""
    path = sim_dir() / "assets" / "face_detection_short_range.tflite"
    if not path.is_file() or hashlib.sha256(path.read_bytes()).hexdigest() != FACE_DETECTOR_SHA256:
        raise DataMissing(f"The face detector model {path} is missing or damaged; reinstall meta-npu-tools.")
    return path


def face_detection_input() -> np.ndarray:
    """[1,128,128,3] float32 in [-1, 1]: the photo in the face detector's input convention."""
    # np.load's result is Any to the checker
    path = packaged_profiles_dir() / "rknn" / "face_detection_short_range.in0.npy"
    array: np.ndarray = np.load(path, allow_pickle=False)
    return array

# SPDX-License-Identifier: MIT
"""The committed .rknn models (npu-model-mediapipe-rknn) on the Rockchip twins.

The stand-in librknnrt (rockchip/fake_librknnrt.c) cannot run a real .rknn graph: for a real
model it replays the outputs of a recording the test writes to /usr/share/rknn-twin/<FNV-1a 64 of
the model file>.rec, keyed by the inputs exactly as npu-run passes them (type and bytes). A
healthy twin's recording holds the golden outputs (the toolkit simulator's) in the model's raw
INT8 form; a faulty twin's holds what a broken board gives: every value collapsed to one (the
i.MX95 field report's pattern) or the golden outputs with a few quantization steps of noise.
The tensor table (dims, type, layout, zero point, scale) comes from the manifest that
scripts/make-rknn-models read from the model file itself.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
LAYER_FILES = ROOT / "meta-npu" / "recipes-models" / "npu-model-mediapipe-rknn" / "files"
PROFILE_DATA = ROOT / "src" / "npu_accept" / "profiles" / "rknn"
MANIFEST = LAYER_FILES / "rknn-models.json"
BOARD_DIR = "/usr/share/npu-models/rknn"  # where the recipe installs them
REFERENCE_DIR = "/usr/share/npu-models"  # the .tflite files, for the CPU reference run
RECORDINGS_DIR = "/usr/share/rknn-twin"
FNV_SEED = 14695981039346656037
FNV_PRIME = 1099511628211
TYPE_CODES = {"float32": 0, "float16": 1, "int8": 2, "uint8": 3}
FMT_CODES = {"NCHW": 0, "NHWC": 1, "NC1HWC2": 2, "UNDEFINED": 3}
FAULTS = ("golden", "degenerate", "perturbed")


def fnv64(data: bytes, value: int = FNV_SEED) -> int:
    """FNV-1a 64, as the stand-in computes it (0.2 s for a megabyte here: fast enough)."""
    for byte in data:
        value = ((value ^ byte) * FNV_PRIME) & 0xFFFFFFFFFFFFFFFF
    return value


def load_manifest() -> dict[str, Any]:
    return json.loads(MANIFEST.read_text())


def tensor_entry(tensor: dict[str, Any]) -> bytes:
    """One row of the stand-in's tensor table (struct tensor in fake_librknnrt.c)."""
    dims = list(tensor["dims"]) + [0] * (4 - len(tensor["dims"]))
    return struct.pack(
        "<I4IIIif32s",
        len(tensor["dims"]),
        *dims,
        TYPE_CODES[tensor["dtype"]],
        FMT_CODES[tensor["fmt"]],
        tensor["zero_point"],
        tensor["scale"],
        tensor["name"].encode()[:31],
    )


def input_key(arrays: list[np.ndarray]) -> int:
    """The key of inputs passed with pass_through = 0 in their own type (npu-run's way)."""
    value = FNV_SEED
    for array in arrays:
        value = fnv64(struct.pack("<I", TYPE_CODES[array.dtype.name]), value)
        value = fnv64(np.ascontiguousarray(array).tobytes(), value)
    return value


def quantize(values: np.ndarray, tensor: dict[str, Any]) -> np.ndarray:
    """The raw INT8 tensor that dequantizes to VALUES (exact for values on the tensor's grid)."""
    steps = np.round(values.astype(np.float64) / tensor["scale"]) + tensor["zero_point"]
    return np.clip(steps, -128, 127).astype(np.int8)


def faulty(raw: np.ndarray, fault: str, seed: int) -> np.ndarray:
    if fault == "golden":
        return raw
    if fault == "degenerate":
        return np.full_like(raw, raw.reshape(-1)[0])
    if fault == "perturbed":
        noise = np.random.default_rng(seed).normal(0.0, 16.0, raw.shape)
        return np.clip(raw.astype(np.int32) + np.round(noise), -128, 127).astype(np.int8)
    raise ValueError(f"unknown fault {fault}; use one of {', '.join(FAULTS)}")


def recording(facts: dict[str, Any], inputs: list[np.ndarray], fault: str = "golden") -> bytes:
    """The stand-in's recording of one model: its tensor table and the outputs for INPUTS."""
    tensors = facts["inputs"] + facts["outputs"]
    data = b"RKNNREC1" + struct.pack("<II", len(facts["inputs"]), len(facts["outputs"]))
    data += b"".join(tensor_entry(t) for t in tensors) + struct.pack("<I", 1)
    data += struct.pack("<Q", input_key(inputs))
    for index, tensor in enumerate(facts["outputs"]):
        golden = np.load(LAYER_FILES / tensor["golden"], allow_pickle=False)
        data += faulty(quantize(golden, tensor), fault, index).tobytes()
    return data


def twin_files(soc: str, fault: str = "golden") -> dict[str, bytes]:
    """Board files of one SoC: the committed .rknn models where the recipe installs them, their
    recordings, and the MediaPipe .tflite files for the CPU reference."""
    from models import FACE_DETECTION, FACE_LANDMARK, model_path

    tflite = {m.name: model_path(m) for m in (FACE_DETECTION, FACE_LANDMARK)}
    files: dict[str, bytes] = {}
    for name, entry in load_manifest()["models"].items():
        facts = entry["socs"][soc]
        model = (LAYER_FILES / facts["rknn"]).read_bytes()
        inputs = [np.load(PROFILE_DATA / entry["input"]["file"], allow_pickle=False)]
        files[f"{BOARD_DIR}/{facts['rknn']}"] = model
        files[f"{RECORDINGS_DIR}/{fnv64(model):016x}.rec"] = recording(facts, inputs, fault)
        files[f"{REFERENCE_DIR}/{name}.tflite"] = tflite[name].read_bytes()
    return files

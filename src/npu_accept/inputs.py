# SPDX-License-Identifier: MIT
"""A model's input tensors, as the profile gives them: seeded random data or .npy files."""

from __future__ import annotations

import numpy as np

from npu_accept import npyio
from npu_accept.profile import FileInput, ModelSpec, RandomInput


def make_inputs(spec: ModelSpec) -> list[np.ndarray]:
    """The input tensors of a model: seeded random data or the profile's .npy files."""
    arrays = []
    for item in spec.inputs:
        if isinstance(item, FileInput):
            arrays.append(npyio.load(item.path))
        else:
            arrays.append(_random(item))
    return arrays


def _random(item: RandomInput) -> np.ndarray:
    rng = np.random.default_rng(item.seed)
    dtype = np.dtype(item.dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        low, high = max(int(item.low), info.min), min(int(item.high), info.max)
        return rng.integers(low, high, size=item.shape, endpoint=True, dtype=dtype)
    return rng.uniform(item.low, item.high, size=item.shape).astype(dtype)

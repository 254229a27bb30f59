# SPDX-License-Identifier: MIT
"""A memo for values the board threads share: computed once, also when every thread asks at once.

``functools.cache`` does not lock: in a fleet, every board's thread reaches the same first call
(the tools archive, the check registry, a schema's compiled checks) before any has finished,
and each computes the value itself — 32 boards, 32 tools archives. `shared` computes a value
once; the other callers wait for it.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


def shared(maxsize: int | None = None) -> Callable[[F], F]:
    """``functools.lru_cache(maxsize)`` whose concurrent first calls compute the value once.

    The callers of one function take turns (a hit costs an uncontended lock); a call that raises
    caches nothing, so the next caller tries again. The function may call other shared functions,
    and itself, but not wait for another thread that calls it.
    """

    def decorate(function: F) -> F:
        cached = functools.lru_cache(maxsize)(function)
        lock = threading.RLock()

        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with lock:
                return cached(*args, **kwargs)

        wrapper.cache_clear = cached.cache_clear  # type: ignore[attr-defined]
        wrapper.cache_info = cached.cache_info  # type: ignore[attr-defined]
        return wrapper  # type: ignore[return-value]

    return decorate

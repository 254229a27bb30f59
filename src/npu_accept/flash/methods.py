# SPDX-License-Identifier: MIT
"""The flashing methods npu-flash knows: every family package's `flash.py` names its own,
`METHODS = {name: module}` (`npu_accept.families.<family>.flash`; bmaptool is `any`'s, since any
board with an SD card can use it).  A method's module provides `build_plan` and `preflight`, and
may name the `flash:` keys it needs in `REQUIRED`.  A profile may use any method registered here.
"""

from __future__ import annotations

import functools
from typing import Protocol

from npu_accept.flash.errors import FlashError
from npu_accept.flash.image import ImageInfo
from npu_accept.flash.plan import Plan
from npu_accept.flash.request import FlashRequest
from npu_accept.flash.spec import FlashSpec


class Method(Protocol):
    """What a flashing method's module provides."""

    def build_plan(self, spec: FlashSpec, info: ImageInfo, request: FlashRequest) -> Plan: ...

    def preflight(self) -> None: ...


@functools.cache
def methods() -> dict[str, Method]:
    """Every family package's methods, in the packages' order; FlashError when two differ on a name."""
    from npu_accept import families

    found: dict[str, Method] = {}
    owner: dict[str, str] = {}
    for package, module in families.modules("flash"):
        for name, method in dict(module.METHODS).items():
            if name in found and found[name] is not method:
                raise FlashError(
                    f"Flashing method '{name}' is registered by both families/{owner[name]}/flash.py "
                    f"and families/{package}/flash.py; keep one."
                )
            found[name], owner[name] = method, package
    return found


def method(name: str) -> Method:
    """The module of method NAME (parse_flash_section has refused unknown names)."""
    return methods()[name]

# SPDX-License-Identifier: MIT
"""meta-npu's Python library for BitBake, registered by conf/layer.conf with
`addpylib ${LAYERDIR}/lib npu_layer` (as oe-core registers `oe` and meta-arm `oeqa`).

addpylib (BitBake >= 2.4) puts meta-npu/lib on sys.path and imports this package into the
metadata's Python namespace, so a class's Python sees `npu_layer.families`.

No BBIMPORTS: BitBake would parse these functions for task signatures, but only event handlers
call them (they decide whether a build starts, not what a task does), and what the functions
read, the family descriptor, is a file that no signature covers whatever BBIMPORTS says.
"""

from . import families

__all__ = ["families"]

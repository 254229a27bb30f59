# SPDX-License-Identifier: MIT
"""The catalogue's reading of one log a board printed, for the suite's own checks.

When a model run fails on the board, its stderr (the runtime's and the delegate's lines) goes
through the same signature catalogue as npu-diagnose, so the check's sentence names the cause
the log shows instead of only its last line.
"""

from __future__ import annotations

from npu_accept.diagnose.findings import Context, Finding, kernel, signatures
from npu_accept.diagnose.sources import Document

MAX_EXPLAINED_BYTES = 1 << 20


def explain(text: str, family: str | None = None, name: str = "log") -> Finding | None:
    """The deepest cause the catalogue finds in TEXT (its kernel and line signatures), or None."""
    if not text.strip():
        return None
    doc = Document(name, text=text[-MAX_EXPLAINED_BYTES:])
    ctx = Context([doc], family_hint=family)
    found = sorted(signatures(ctx) + kernel(ctx), key=lambda f: f.rank)
    return found[0] if found else None

# SPDX-License-Identifier: MIT
"""What the user handed npu-diagnose: each input read once, recognised by its content.

An input is whatever the user has — a label_image / benchmark_model log, a neutron-converter
`--dump-statistics` print-out, a dmesg, an RKNN runtime log, a model_runner output, an
`npu-info --json`, a .npy output, a .rknn or .cvimodel file, a whole forum post with several of
these pasted into it — so one input may be recognised as several kinds.
"""

from __future__ import annotations

import codecs
import functools
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from npu_accept import npyio
from npu_accept.diagnose.lines import Line, read_lines

MAX_INPUT_BYTES = 64 << 20
QUOTE_CHARS = 160
NPY_MAGIC = b"\x93NUMPY"

KIND_TITLES = {
    "npy": "NumPy output tensor",
    "npu-info": "npu-info --json",
    "npu-run": "npu-run --json",
    "rknn-model": ".rknn model",
    "cvimodel": ".cvimodel model",
    "converter-stats": "neutron-converter --dump-statistics output",
    "tflite-log": "TFLite log (label_image / benchmark_model)",
    "tflite-verbose": "TFLite verbose interpreter dump (-v 1)",
    "kernel-log": "kernel log (dmesg)",
    "rknn-log": "RKNN runtime log",
    "cvi-log": "CV18xx runtime / model_runner output",
    "uboot-log": "U-Boot console",
    "soc-revision": "/sys/devices/soc0/revision",
    "report-text": "a report's own words",
    "logcat": "Android logcat",
    "journal": "journald log",
    "runtime-log": "runtime log lines (E/W/I TAG: …)",
    "traceback": "Python traceback",
    "convert-log": "model conversion log (RKNN-Toolkit2, TPU-MLIR)",
    "error-lines": "lines with errors that no known tool's output matches",
}

TEXT_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "converter-stats",
        re.compile(r"neutron-converter|Statistics for NeutronGraph|Clock cycles per inference:"),
    ),
    (
        "tflite-log",
        re.compile(
            r"INFO: Loaded model|nodes delegated out of|node\(s\) with delegate|EXTERNAL delegate|"
            r"XNNPACK delegate for CPU|label_image|benchmark_model|failed to invoke|Failed to invoke|"
            r"Vx delegate|EXTERNAL delegate|external_delegate|NNAPI|Ethos-U|ethosu|Teflon|teflon"
        ),
    ),
    ("tflite-verbose", re.compile(r"Execution plan as the list of|Operator (?:Builtin Code|Custom Name)")),
    (
        "kernel-log",
        re.compile(r"^\s*(?:<\d+>)?\[\s*\d+\.\d+\]|Linux version \d|\bRKNPU: |\brknpu\b", re.MULTILINE),
    ),
    (
        "rknn-log",
        re.compile(
            r"RKNN\s*: |RKNN/|librknnrt|rknn_server|RKNN Runtime Information|rknn-toolkit|rknn_\w+\(|"
            r"rknnrt version|rknn_api|rknn_init|rkllm|NPUTransfer|RKNNAPI|API Version: \d|Driver Version: \d|"
            r"NPU load:|RKNPU driver: v|API version: \d|/dev/dri|HAL user version|"
            r"rknpu2 (?:runtime|driver) version|sdk version: \d[^\n]*driver version: \d|"
            r"model input num: \d+, output num: \d+|rknn_\w+_demo"
        ),
    ),
    (
        "cvi-log",
        re.compile(r"cvimodel|CviModel|model_runner|ion alloc failed|CVI_NN_|cviruntime|CVI_TDL|cvi_tpu"),
    ),
    (
        "convert-log",
        re.compile(
            r"model_transform|model_deploy|npz_tool|tpuc-opt|run_calibration|--> Building model|"
            r"--> Export rknn|--> Config model|rknn\.build|rknn-toolkit2 version"
        ),
    ),
    ("traceback", re.compile(r"^Traceback \(most recent call last\):", re.MULTILINE)),
    ("uboot-log", re.compile(r"CPU:\s+i\.MX\w+ rev\d+\.\d+")),
)
REVISION_ONLY = re.compile(r"^\s*\d+\.\d+\s*$")
STATED_REVISION = re.compile(
    r"(?:silicon|revision|\brev\b\.?|シリコン|リビジョン|ревизи)[^\n]{0,24}?[(\s]?(?P<label>[AB][0-9])\b",
    re.IGNORECASE,
)


class InputError(Exception):
    """An input cannot be read; the message is one sentence naming it and the fix."""


@dataclass(frozen=True)
class Evidence:
    """A line of an input that a finding rests on."""

    source: str
    line_no: int | None
    text: str
    focus: str | None = None  # the matched part, kept visible when a long line is cut

    def quoted(self) -> str:
        """The line escaped (no control characters) and bounded, centred on the matched part."""
        return quote(self.text, self.focus)

    def as_dict(self) -> dict[str, Any]:
        return {"source": self.source, "line": self.line_no, "text": self.quoted()}


def quote(text: str, around: str | None = None) -> str:
    cleaned = "".join(c if c.isprintable() or c == " " else f"\\x{ord(c):02x}" for c in text.strip())
    if len(cleaned) <= QUOTE_CHARS:
        return cleaned
    centre = cleaned.find(around) if around else -1
    start = max(0, min(centre - QUOTE_CHARS // 3, len(cleaned) - QUOTE_CHARS)) if centre >= 0 else 0
    piece = cleaned[start : start + QUOTE_CHARS]
    return ("…" if start else "") + piece + ("…" if start + QUOTE_CHARS < len(cleaned) else "")


@dataclass
class Document:
    """One input: its name, its text (or array / bytes), and the kinds recognised in it."""

    name: str
    text: str = ""
    data: bytes = b""
    array: np.ndarray | None = None
    json: dict[str, Any] | None = None
    kinds: list[str] = field(default_factory=list)

    @property
    def lines(self) -> list[str]:
        return self.text.splitlines()

    @functools.cached_property
    def records(self) -> list[Line]:
        """Every line unwrapped: its message, level and source (npu_accept.diagnose.lines)."""
        return read_lines(self.text)

    def grep(self, pattern: re.Pattern[str]) -> list[tuple[Evidence, re.Match[str]]]:
        found = []
        for number, line in enumerate(self.lines, start=1):
            match = pattern.search(line)
            if match:
                found.append((Evidence(self.name, number, line, match.group(0)), match))
        return found

    def evidence(self, line_no: int) -> Evidence:
        return Evidence(self.name, line_no, self.lines[line_no - 1])

    @property
    def described(self) -> str:
        return ", ".join(KIND_TITLES[k] for k in self.kinds) or "nothing recognised"


def read_input(spec: str, stdin: Any = None) -> Document:
    """Read one FILE argument ('-' = standard input) and recognise it."""
    if spec == "-":
        raw = (stdin.buffer if hasattr(stdin, "buffer") else stdin).read(MAX_INPUT_BYTES + 1)
        name = "stdin"
    else:
        path = Path(spec)
        if not path.is_file():
            raise InputError(
                f"{spec} {_not_a_file(path)}; give the path of a log, a print-out or an output tensor."
            )
        if path.stat().st_size > MAX_INPUT_BYTES:
            raise InputError(
                f"{spec} is larger than {MAX_INPUT_BYTES >> 20} MiB; give the relevant part of the log."
            )
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise InputError(f"{spec} cannot be read ({exc.strerror}); check its permissions.") from None
        name = path.name
    if len(raw) > MAX_INPUT_BYTES:
        raise InputError(
            f"standard input is larger than {MAX_INPUT_BYTES >> 20} MiB; give the relevant part."
        )
    return recognise(name, raw)


def _not_a_file(path: Path) -> str:
    """What a path is when it is not a regular file (stat only: a FIFO is never opened)."""
    import stat

    try:
        mode = path.stat().st_mode
    except OSError:
        return "is not a file"
    if stat.S_ISDIR(mode):
        return "is a directory, not a file"
    if stat.S_ISFIFO(mode):
        return "is a named pipe, not a file (pipe it to standard input with '-' instead)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "is a device, not a file"
    return "is not a regular file"


def recognise(name: str, raw: bytes) -> Document:
    """The document with every kind its content shows."""
    if raw.startswith(NPY_MAGIC):
        return _npy(name, raw)
    if raw.startswith(b"RKNN"):
        return Document(name, data=raw, kinds=["rknn-model"])
    if raw.startswith(b"CviModel"):
        return Document(name, data=raw, kinds=["cvimodel"])
    if _binary(raw):
        raise InputError(
            f"{name} is a binary file, not a log or print-out; give the text the board or the tool "
            "printed (a .npy, .rknn or .cvimodel file is read by its header)."
        )
    text = decode(raw).replace("\r\n", "\n")
    doc = Document(name, text=text, data=raw)
    parsed = _json(text)
    if parsed is not None:
        schema = str(parsed.get("schema", ""))
        if schema.startswith("npu-info/"):
            doc.json, doc.kinds = parsed, ["npu-info"]
        elif schema.startswith("npu-run/"):
            doc.json, doc.kinds = parsed, ["npu-run"]
        return doc
    if REVISION_ONLY.match(text):
        doc.kinds = ["soc-revision"]
        return doc
    doc.kinds = [kind for kind, pattern in TEXT_KINDS if pattern.search(text)]
    sources = {line.source.partition(":")[0] for line in doc.records}
    for kind, source in (("logcat", "logcat"), ("journal", "journal"), ("runtime-log", "runtime")):
        if source in sources:
            doc.kinds.append(kind)
    if "kernel" in sources and "kernel-log" not in doc.kinds:
        doc.kinds.append("kernel-log")
    if STATED_REVISION.search(text):
        doc.kinds.append("report-text")
    if not doc.kinds and any(line.is_error for line in doc.records):
        doc.kinds.append("error-lines")
    return doc


BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


def decode(raw: bytes) -> str:
    """The text in whatever encoding it came: a BOM's, UTF-8, GB18030 (a Chinese Windows console)
    when that alone reads it whole; invalid bytes are kept as \\xNN escapes, never dropped."""
    for bom, codec in BOMS:
        if raw.startswith(bom):
            return raw.decode(codec, "backslashreplace")
    if _utf16_without_bom(raw):
        return raw.decode("utf-16-le", "backslashreplace")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        pass
    try:
        text = raw.decode("gb18030")
    except UnicodeDecodeError:
        return raw.decode("utf-8", "backslashreplace")
    # GB18030 decodes almost any bytes: trust it only when the result is mostly CJK and ASCII.
    cjk = sum(1 for c in text if "\u4e00" <= c <= "\u9fff" or c.isascii())
    return text if cjk >= 0.95 * len(text) else raw.decode("utf-8", "backslashreplace")


def _utf16_without_bom(raw: bytes) -> bool:
    head = raw[:512]
    return len(head) >= 8 and head[1::2].count(0) >= 0.9 * (len(head) // 2) and head[0::2].count(0) == 0


def _binary(raw: bytes) -> bool:
    """Bytes that are no text: NULs (outside UTF-16) or mostly control bytes in the first 8 KiB."""
    head = raw[:8192]
    if not head or _utf16_without_bom(raw) or any(head.startswith(b) for b, _ in BOMS):
        return False
    if b"\0" in head:
        return True
    control = sum(1 for b in head if b < 32 and b not in (9, 10, 12, 13, 27))
    return control > 0.1 * len(head)


def _npy(name: str, raw: bytes) -> Document:
    """A .npy read through the checked loader (dtype allowlist, declared size = data, no pickle)."""
    try:
        array = npyio.load_bytes(raw, name)
    except npyio.NpyError:
        return Document(name, data=raw)
    return Document(name, data=raw, array=array, kinds=["npy"])


def _json(text: str) -> dict[str, Any] | None:
    stripped = text.strip()
    if not stripped.startswith("{"):
        return None
    try:
        parsed = json.loads(stripped)
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict) else None

# SPDX-License-Identifier: MIT
"""What users paste, line by line: each line's own message with the wrapping taken off.

A user pastes a log the way their tool printed it, often through a forum's quoting: Android
logcat (brief, tag and threadtime formats), journald (short, short-iso, json), dmesg with or without
`[ seconds]`, with `-T` or `-x`, the RKNN runtime's `E RKNN: [hh:mm:ss.mmm] …` with or without its
stamp, Python tracebacks around them, CRLF, `> ` quote prefixes, shell prompts, ANSI colour codes.
Signatures match the message, so one pattern serves every wrapping; the level (E/W/…) and the
source (kernel, logcat tag, journald unit) are kept beside it for the "error line" test.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()][A-Z0-9]|\x1b[=>]")
QUOTE_PREFIX = re.compile(r"^(?:[ \t]*>(?: |$))+")
PROMPT = re.compile(
    r"^(?:\([\w.-]+\)\s*)?(?:[\w.-]+@[\w.-]+(?::[^\s#$]*)?\s?[#$]|(?:[\w.-]+:)?[~/][^\s#$]*\s?[#$]|"
    r"[#$]|C:\\[^>]*>|>>>|\(Pdb\)|[\w.-]*:/ ?[#$])\s+(?P<command>\S.*)$"
)
LOGCAT_THREADTIME = re.compile(
    r"^(?:\d{4}-)?\d\d-\d\d\s+\d\d:\d\d:\d\d\.\d+\s+(?:\w+\s+)?\d+\s+\d+\s+(?P<level>[VDIWEF])\s+"
    r"(?P<tag>[^:]*?)\s*:\s?(?P<message>.*)$"
)
LOGCAT_BRIEF = re.compile(r"^(?P<level>[VDIWEF])/(?P<tag>[^(:]+?)\s*\(\s*\d+\):\s?(?P<message>.*)$")
LOGCAT_TAG = re.compile(r"^(?P<level>[VDIWEF])/(?P<tag>[^:\s][^:]*?)\s*:\s?(?P<message>.*)$")
# "E RKNN: …", "W rknn-toolkit2 version: …" (Android's and the runtime's own short form)
LEVEL_TAG = re.compile(r"^(?P<level>[VDIWEF])\s+(?P<tag>[A-Za-z_][\w.-]*)\s*:\s?(?P<message>.*)$")
# "W Query dynamic range failed…", "E Catch exception…": RKNN-Toolkit's own level letter alone
LEVEL_ONLY = re.compile(r"^(?P<level>[VDIWEF]) (?P<message>\S.*)$")
JOURNAL_SHORT = re.compile(
    r"^(?:[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d+)?"
    r"(?:[+-]\d\d:?\d\d|Z)?)\s+\S+\s+(?P<tag>[^\s:\[]+)(?:\[\d+\])?:\s?(?P<message>.*)$"
)
DMESG_X = re.compile(
    r"^(?P<facility>kern|user|daemon|syslog|mail|auth|local\d)\s*:\s*"
    r"(?P<level>emerg|alert|crit|err|warn|notice|info|debug)\s*:\s?(?P<message>.*)$"
)
KERNEL_STAMP = re.compile(
    r"^(?:<\d+>)?\[\s*(?:\d+\.\d+|(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) [A-Z][a-z]{2} [ \d]\d "
    r"\d\d:\d\d:\d\d \d{4})\]\s?(?:\[\s*[CT]\d+\]\s?)?"
)
SYSLOG_PRIORITY = re.compile(r"^<(?P<priority>\d)>")
# "ERROR: …", "WARNING: …", "[ERROR] …", GLib's "** (prog:123): WARNING **: …"
WORD_LEVEL = re.compile(
    r"^(?:\*\* \([^)]*\): )?\[?(?P<word>FATAL|ERROR|Error|WARNING|Warning|WARN|INFO|Info|DEBUG)\]?"
    r"(?: \*\*)?\s*[:\]]"
)
WORD_LEVELS = {"FATAL": "F", "ERROR": "E", "Error": "E", "WARNING": "W", "Warning": "W", "WARN": "W"}
RUNTIME_STAMP = re.compile(r"^\[\d\d:\d\d:\d\d(?:\.\d+)?\]\s?")
SYSLOG_LEVELS = {"emerg": "F", "alert": "F", "crit": "F", "err": "E", "warn": "W", "notice": "I"}
SYSLOG_PRIORITIES = {"0": "F", "1": "F", "2": "F", "3": "E", "4": "W", "5": "I", "6": "I", "7": "D"}

# Words that make a line an error whatever its wrapping (the "unexplained" test of npu-diagnose).
# Kernel events that are faults whatever their subsystem: a board that prints them is not healthy
# (npu-diagnose counts them even where a kernel line names no part of the NPU stack).
SEVERE_KERNEL_WORDS = (
    r"BUG:|Oops|Kernel panic|Unable to handle kernel|invoked oom-killer|Out of memory: Kill|soft lockup|"
    r"hard LOCKUP|self-detected stall|Disabling IRQ #\d+|nobody cared"
)
SEVERE_KERNEL = re.compile(SEVERE_KERNEL_WORDS)
ERROR_WORDS = re.compile(
    r"\b(?:ERROR|Error|error|FAILED|FAIL|Failed|failed|fail|Fail|fault|Fault|FATAL|Fatal|fatal|"
    r"Assertion|assertion|assert|panic|Aborted|abort|Segmentation|core dumped|Traceback|Exception|"
    r"not supported|unsupported|Unsupported|Invalid|invalid|cannot|Cannot|can't|timeout|Timeout|"
    r"exit code [1-9]|exit status [1-9]|returned? -?[1-9]\d*\b|ret\s*=\s*-[1-9]|errno|UNREACHABLE|"
    r"CANNOT LINK|oom-killer|Out of memory|Call trace:|\bhang\b|version magic|" + SEVERE_KERNEL_WORDS + ")"
)
# Lines that only look like errors: a count of zero failures, an option's name, the word "error"
# in a file or function name.
NOT_ERROR = re.compile(
    r"\b(?:0 errors?|no errors?|0 failed|errors?: 0|error_count: 0|fail(?:ed)?: 0)\b|"
    r"(?:[-_./]error|error[-_./])\w|[-_./]fail\w|\bfail[-_]\w"
)


@dataclass(frozen=True)
class Line:
    """One pasted line: its number, the text as given, and its message unwrapped."""

    number: int
    raw: str
    message: str
    level: str | None  # V D I W E F where the wrapping says it; None otherwise
    source: str  # "kernel", "logcat:TAG", "journal:UNIT", "runtime:TAG", "command", "text"

    @property
    def is_command(self) -> bool:
        return self.source == "command"

    @property
    def is_kernel(self) -> bool:
        return self.source == "kernel"

    @property
    def is_error(self) -> bool:
        """An error-level line: the wrapping says E/F, or the message has an error word."""
        if self.is_command or not self.message.strip():
            return False
        if self.level in ("E", "F"):
            return True
        if self.level in ("V", "D", "I", "W"):
            return False  # a warning is not an error line; a signature may still read it
        return bool(ERROR_WORDS.search(self.message)) and not NOT_ERROR.search(self.message)


def clean(text: str) -> str:
    """A line without colour codes, carriage returns and quote prefixes."""
    text = ANSI.sub("", text).replace("\r", "")
    return QUOTE_PREFIX.sub("", text)


def unwrap(number: int, raw: str) -> Line:
    """The line's message, level and source, whatever printed it."""
    text = clean(raw).rstrip()
    stripped = text.lstrip()
    if stripped.startswith("{") and '"MESSAGE"' in stripped:
        journal = _journal_json(number, raw, stripped)
        if journal is not None:
            return journal
    match = DMESG_X.match(stripped)
    if match:
        body = KERNEL_STAMP.sub("", match.group("message"), count=1)
        level = SYSLOG_LEVELS.get(match.group("level"))
        return Line(number, raw, body, level, "kernel" if match.group("facility") == "kern" else "journal")
    priority = SYSLOG_PRIORITY.match(stripped)
    match = KERNEL_STAMP.match(stripped)
    if match:
        level = SYSLOG_PRIORITIES.get(priority.group("priority")) if priority else None
        return _runtime_or(number, raw, stripped[match.end() :], level, "kernel")
    for pattern, kind in ((LOGCAT_THREADTIME, "logcat"), (LOGCAT_BRIEF, "logcat"), (LOGCAT_TAG, "logcat")):
        match = pattern.match(stripped)
        if match:
            message = RUNTIME_STAMP.sub("", match.group("message").strip(), count=1)
            return Line(number, raw, message, match.group("level"), f"{kind}:{match.group('tag').strip()}")
    match = JOURNAL_SHORT.match(stripped)
    if match:
        tag = match.group("tag")
        source = "kernel" if tag == "kernel" else f"journal:{tag}"
        body = (
            KERNEL_STAMP.sub("", match.group("message"), count=1)
            if tag == "kernel"
            else match.group("message")
        )
        return _runtime_or(number, raw, body, None, source)
    match = PROMPT.match(stripped)
    if match:
        return Line(number, raw, match.group("command"), None, "command")
    return _runtime_or(number, raw, stripped, None, "text")


def _runtime_or(number: int, raw: str, body: str, level: str | None, source: str) -> Line:
    """A runtime's "E RKNN: [stamp] message" inside any wrapping; the body itself otherwise."""
    match = LEVEL_TAG.match(body)
    if match:
        message = RUNTIME_STAMP.sub("", match.group("message").strip(), count=1)
        return Line(number, raw, message, match.group("level"), f"runtime:{match.group('tag')}")
    match = LEVEL_ONLY.match(body.strip())
    if match:
        return Line(number, raw, match.group("message"), match.group("level"), "runtime:")
    message = RUNTIME_STAMP.sub("", body.strip(), count=1)
    word = WORD_LEVEL.match(message)
    if word and level is None:
        level = WORD_LEVELS.get(word.group("word"), "I")
    return Line(number, raw, message, level, source)


def _journal_json(number: int, raw: str, text: str) -> Line | None:
    try:
        entry = json.loads(text)
    except ValueError:
        return None
    if not isinstance(entry, dict) or not isinstance(entry.get("MESSAGE"), str):
        return None
    unit = str(entry.get("SYSLOG_IDENTIFIER") or entry.get("_COMM") or "journal")
    level = SYSLOG_PRIORITIES.get(str(entry.get("PRIORITY", "")))
    source = "kernel" if entry.get("_TRANSPORT") == "kernel" or unit == "kernel" else f"journal:{unit}"
    return _runtime_or(number, raw, entry["MESSAGE"], level, source)


def read_lines(text: str) -> list[Line]:
    """Every line of a pasted text, unwrapped (line numbers as the user sees them)."""
    return [unwrap(number, raw) for number, raw in enumerate(text.splitlines(), start=1)]

# SPDX-License-Identifier: MIT
"""A trace of every board: what the suite ran there, how long it took, what came back.

When a sentence is wrong there has to be a record of what really happened. Every command, upload
and download the suite sends a board goes through a `TracedLink`, which writes one JSON line per
operation to the board's `trace.jsonl` in the artifacts (`npu-accept-trace/1`: kind, the command
(cut at 2,000 characters), start (seconds since the examination began), duration, exit status,
signal, bytes in and out, bytes dropped by the output bounds, and the outcome: ok, timeout, flood,
transport error), flushed as it goes so a killed run keeps what it did. It is always on and
bounded (`MAX_RECORDS` lines a board). The `npu_accept.trace` logger gets the same records;
`npu-accept run -v` prints them live.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from pathlib import Path
from typing import IO, Any

from npu_accept.boardlink import Bounds

SCHEMA = "npu-accept-trace/1"
FILE_NAME = "trace.jsonl"
MAX_RECORDS = 10_000
MAX_COMMAND_CHARS = 2_000

log = logging.getLogger("npu_accept.trace")


class Trace:
    """The trace file of one board; one JSON object a line, at most MAX_RECORDS of them."""

    def __init__(self, path: Path, target: str) -> None:
        self.path = path
        self.target = target
        self.started = time.monotonic()
        self.count = 0
        self._lock = threading.Lock()
        self._file: IO[str] | None
        try:
            self._file = path.open("w", encoding="utf-8")
            self._write({"schema": SCHEMA, "target": target, "started": time.time()})
        except OSError:
            self._file = None  # a trace that cannot be written must not cost the board its verdict

    def record(self, **fields: Any) -> None:
        log.info("%s %s", self.target, fields)
        with self._lock:
            if self._file is None:
                return
            self.count += 1
            if self.count > MAX_RECORDS:
                if self.count == MAX_RECORDS + 1:
                    self._write({"kind": "limit", "note": f"more than {MAX_RECORDS} operations; not traced"})
                return
            self._write(fields)

    def _write(self, fields: dict[str, Any]) -> None:
        assert self._file is not None
        try:
            self._file.write(json.dumps(fields, ensure_ascii=True) + "\n")
            self._file.flush()
        except OSError:
            self._file = None

    def close(self) -> None:
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None


def _outcome(exc: BaseException | None) -> str:
    if exc is None:
        return "ok"
    name = type(exc).__name__
    return {"CommandTimeout": "timeout", "OutputFlood": "flood"}.get(name, f"error: {name}")


class TracedLink:
    """A board link that traces every operation; everything else is the wrapped link's."""

    def __init__(self, link: Any, trace: Trace) -> None:
        self._link = link
        self._trace = trace

    def __getattr__(self, name: str) -> Any:
        return getattr(self._link, name)

    def _traced(self, kind: str, what: str, bytes_in: int, call: Any) -> Any:
        start = time.monotonic()
        error: BaseException | None = None
        result: Any = None
        try:
            result = call()
            return result
        except BaseException as exc:
            error = exc
            raise
        finally:
            fields: dict[str, Any] = {
                "kind": kind,
                "command": what[:MAX_COMMAND_CHARS] + ("…" if len(what) > MAX_COMMAND_CHARS else ""),
                "start": round(start - self._trace.started, 4),
                "duration": round(time.monotonic() - start, 4),
                "bytes_in": bytes_in,
                "outcome": _outcome(error),
            }
            run = result[1] if isinstance(result, tuple) else result
            if run is not None and hasattr(run, "exit_code"):
                fields.update(
                    exit_code=run.exit_code,
                    signal=getattr(run, "signal", None),
                    bytes_out=len(run.stdout or b"") + len(run.stderr or b""),
                    dropped=getattr(run, "stdout_dropped", 0) + getattr(run, "stderr_dropped", 0),
                )
            self._trace.record(**fields)

    def run(
        self, cmd: str, timeout: float, input: bytes | None = None, *, max_output: int, flood_limit: int
    ) -> Any:
        bounds = Bounds(max_output=max_output, flood_limit=flood_limit)
        return self._traced(
            "run", cmd, len(input or b""), lambda: self._link.run(cmd, timeout, input, **bounds)
        )

    def run_in_temp_dir(
        self, script: str, timeout: float, input: bytes | None = None, *, max_output: int, flood_limit: int
    ) -> tuple[str, Any]:
        bounds = Bounds(max_output=max_output, flood_limit=flood_limit)
        result: tuple[str, Any] = self._traced(
            "run",
            script,
            len(input or b""),
            lambda: self._link.run_in_temp_dir(script, timeout=timeout, input=input, **bounds),
        )
        return result

    def put(self, local: Path, remote: str, *args: Any) -> None:
        size = local.stat().st_size if local.is_file() else 0
        self._traced("put", f"{local} -> {remote}", size, lambda: self._link.put(local, remote, *args))

    def get(self, remote: str, local: Path, *args: Any, **kwargs: Any) -> Any:
        return self._traced("get", remote, 0, lambda: self._link.get(remote, local, *args, **kwargs))

    def make_temp_dir(self, *args: Any) -> str:
        return str(self._traced("mkdir", "make_temp_dir", 0, lambda: self._link.make_temp_dir(*args)))

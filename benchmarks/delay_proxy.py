# SPDX-License-Identifier: MIT
"""A TCP proxy on loopback that delays every byte by a fixed one-way latency and counts how often
the client had to wait for the server: a slow link without netem (this kernel has none).

    with DelayProxy(("127.0.0.1", sshd_port), one_way_s=0.020) as proxy:   # 40 ms round trip
        ... connect to 127.0.0.1:proxy.port ...
    proxy.waits   # client sends that followed a silence of >= 0.8 RTT with server data in between

A client that waits for an answer sends nothing for one round trip, then goes on: each such gap
is one round trip the client paid. Gaps are measured where the client's bytes reach the proxy.
The TCP handshake is not delayed (the proxy accepts locally), so it is not in `waits`; add one
round trip for it. Bandwidth is not limited. Used by benchmarks/bench_link.py.
"""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import dataclass, field


@dataclass
class _Counter:
    rtt: float
    last_client: float | None = None
    server_since: bool = False
    waits: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def client_sent(self, now: float) -> None:
        with self.lock:
            if (
                self.last_client is not None
                and self.server_since
                and now - self.last_client >= 0.8 * self.rtt
            ):
                self.waits += 1
            self.last_client = now
            self.server_since = False

    def server_delivered(self) -> None:
        with self.lock:
            self.server_since = True


class DelayProxy:
    """Forward 127.0.0.1:<port> to ``upstream`` with ``one_way_s`` of delay in each direction."""

    def __init__(self, upstream: tuple[str, int], one_way_s: float) -> None:
        self.upstream = upstream
        self.one_way_s = one_way_s
        self.port = 0
        self._counter = _Counter(rtt=2 * one_way_s)
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="delay-proxy", daemon=True)
        self._server: asyncio.base_events.Server | None = None
        # asyncio's stream server drops its reference to a connection's task when the client's
        # side closes; a task nothing else holds can be collected while it still waits.
        self._connections: set[asyncio.Task] = set()

    @property
    def waits(self) -> int:
        return self._counter.waits

    def reset(self) -> None:
        with self._counter.lock:
            self._counter.waits = 0
            self._counter.last_client = None
            self._counter.server_since = False

    def __enter__(self) -> DelayProxy:
        self._thread.start()
        self._ready.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self._shutdown(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        if not self._thread.is_alive():
            self._loop.close()

    async def _shutdown(self) -> None:
        if self._server is not None:
            self._server.close()
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await asyncio.sleep(0)  # the transports' close callbacks

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._server = self._loop.run_until_complete(asyncio.start_server(self._client, "127.0.0.1", 0))
        self.port = self._server.sockets[0].getsockname()[1]
        self._ready.set()
        self._loop.run_forever()

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        # Ends normally when the proxy shuts down: asyncio's stream server asks a cancelled
        # connection task for its exception, which prints a traceback (Python 3.11).
        task = asyncio.current_task()
        if task is not None:
            self._connections.add(task)
            task.add_done_callback(self._connections.discard)
        writers = [writer]
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.upstream)
            writers.append(up_writer)
            await asyncio.gather(
                self._pipe(reader, up_writer, from_client=True),
                self._pipe(up_reader, writer, from_client=False),
                return_exceptions=True,
            )
        except (OSError, asyncio.CancelledError):
            # Closed here only when cut short: otherwise each pipe closes its writer once its
            # last delayed bytes are delivered.
            for each in writers:
                each.close()

    async def _pipe(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, from_client: bool
    ) -> None:
        loop = asyncio.get_running_loop()

        def deliver(data: bytes) -> None:
            if not writer.is_closing():
                writer.write(data)
                if not from_client:
                    self._counter.server_delivered()

        def finish() -> None:
            if not writer.is_closing():
                writer.close()

        while True:
            try:
                data = await reader.read(1 << 16)
            except ConnectionError:  # a reset ends the stream, as EOF does
                data = b""
            now = time.monotonic()
            if from_client and data:
                self._counter.client_sent(now)
            release = loop.time() + self.one_way_s
            if not data:
                loop.call_at(release, finish)
                return
            loop.call_at(release, deliver, data)

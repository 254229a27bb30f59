# SPDX-License-Identifier: MIT
"""benchmarks/delay_proxy.py, the slow link of bench_link: it counts the round trips a client
waited for (the figure issue 14's goal is judged by), delivers every byte, and ends quietly when
the server resets a connection or the proxy shuts down with connections open."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from delay_proxy import DelayProxy  # noqa: E402

ONE_WAY_S = 0.02


@contextlib.contextmanager
def _server(handle) -> Iterator[tuple[str, int]]:
    """A TCP server on loopback; each connection handled by ``handle`` in a thread of its own."""
    listener = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=handle, args=(conn,), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield listener.getsockname()
    finally:
        listener.close()


def _echo(conn: socket.socket) -> None:
    with conn:
        while data := conn.recv(65536):
            conn.sendall(data)


@pytest.fixture
def echo() -> Iterator[tuple[str, int]]:
    with _server(_echo) as address:
        yield address


@pytest.fixture
def loop_errors(monkeypatch: pytest.MonkeyPatch) -> list[dict]:
    """What the proxy's event loop reported as unhandled (asyncio prints those as tracebacks)."""
    errors: list[dict] = []
    real = asyncio.new_event_loop

    def new_loop() -> asyncio.AbstractEventLoop:
        loop = real()
        loop.set_exception_handler(lambda _loop, context: errors.append(context))
        return loop

    monkeypatch.setattr(asyncio, "new_event_loop", new_loop)
    return errors


def _connect(proxy: DelayProxy) -> socket.socket:
    return socket.create_connection(("127.0.0.1", proxy.port), timeout=5)


def _exchange(sock: socket.socket, data: bytes, expect: bytes | None = None) -> None:
    sock.sendall(data)
    expect = data if expect is None else expect
    got = b""
    while len(got) < len(expect):
        chunk = sock.recv(65536)
        assert chunk, "the proxy closed the connection early"
        got += chunk
    assert got == expect


def test_each_answer_waited_for_is_one_round_trip(echo, loop_errors) -> None:
    with DelayProxy(echo, one_way_s=ONE_WAY_S) as proxy:
        with _connect(proxy) as sock:
            for index in range(5):
                _exchange(sock, b"x%d" % index)
        assert proxy.waits == 4  # the first send waited for nothing
    assert loop_errors == []


def test_sends_without_waiting_cost_no_round_trip(echo) -> None:
    with DelayProxy(echo, one_way_s=ONE_WAY_S) as proxy:
        with _connect(proxy) as sock:
            for index in range(5):
                sock.sendall(b"y%d" % index)
            _exchange(sock, b"end", expect=b"y0y1y2y3y4end")
        assert proxy.waits == 0


def test_bytes_sent_just_before_the_server_closes_arrive() -> None:
    payload = bytes(range(256)) * 4096

    def send_and_close(conn: socket.socket) -> None:
        with conn:
            conn.sendall(payload)

    with _server(send_and_close) as address:
        with DelayProxy(address, one_way_s=ONE_WAY_S) as proxy:
            with _connect(proxy) as sock:
                got = b""
                while chunk := sock.recv(65536):
                    got += chunk
        assert got == payload


def test_a_reset_by_the_server_and_a_shutdown_with_open_connections_are_quiet(loop_errors) -> None:
    def reset(conn: socket.socket) -> None:
        conn.recv(16)
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        conn.close()  # SO_LINGER 0: RST instead of FIN

    with _server(reset) as address:
        with DelayProxy(address, one_way_s=ONE_WAY_S) as proxy:
            with _connect(proxy) as sock:
                sock.sendall(b"hello")
                assert sock.recv(16) == b""  # the reset reaches the client as the end
            left_open = _connect(proxy)
        left_open.close()
    assert loop_errors == []

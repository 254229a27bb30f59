# SPDX-License-Identifier: MIT
"""The suite against labgrid 26's own coordinator and exporter (the real engine, on loopback).

A module fixture starts `labgrid-coordinator` on a free 127.0.0.1 port in a temporary directory
and `labgrid-exporter` with one NetworkService per board twin (supervised: the exporter exits when
it loses the coordinator), then creates places with matches and tags, as a lab admin would with
`labgrid-client`. The tests acquire, reserve and release places with `labgrid-client` as a lab
user does; the suite itself never acquires, releases or kicks a place. Every refusal has its twin
that passes: an acquired place is accepted, the same place not acquired (or held by another
LG_USERNAME, or misnamed, or behind a coordinator that is down) ends with exit 4 and one sentence.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml
from twins.boards_run import read_junit

from npu_accept.sim.harness import fleet_access
from npu_accept.sim.imx95 import HEALTHY, imx95_assets, imx95_spec, imx95_twin_profile

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
TAGS = {"board": "imx95-twin", "lab": "ci"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def tool(name: str) -> str:
    path = BIN / name
    if not path.exists():
        pytest.fail(f"{name} is missing beside {sys.executable}; pip install -e '.[dev]' (labgrid).")
    return str(path)


@dataclass
class Lab:
    """A coordinator, one supervised exporter and the places of the twins."""

    workdir: Path
    address: str
    places: dict[str, str]  # place name -> twin target
    identity: Path
    known_hosts: Path
    profile: Path
    exporter_config: Path
    coordinator: subprocess.Popen[bytes] | None = None
    exporter: subprocess.Popen[bytes] | None = None
    supervise: bool = True
    restarts: int = 0
    _stop: threading.Event = field(default_factory=threading.Event)

    def client(self, *args: str, user: str = "ci", token: str | None = None, timeout: float = 60):
        env = {k: v for k, v in os.environ.items() if not k.startswith("LG_")}
        env.update(LG_COORDINATOR=self.address, LG_USERNAME=user)
        if token:
            env["LG_TOKEN"] = token
        return subprocess.run(
            [tool("labgrid-client"), *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def must(self, *args: str, user: str = "ci", token: str | None = None) -> str:
        done = self.client(*args, user=user, token=token)
        assert done.returncode == 0, f"labgrid-client {' '.join(args)}: {done.stdout}{done.stderr}"
        return done.stdout

    def start_exporter(self) -> None:
        log = (self.workdir / "exporter.log").open("ab")
        self.exporter = subprocess.Popen(
            [
                tool("labgrid-exporter"),
                "-c",
                self.address,
                "-n",
                "twins",
                "--hostname",
                "127.0.0.1",
                str(self.exporter_config),
            ],
            cwd=self.workdir,
            stdout=log,
            stderr=subprocess.STDOUT,
        )

    def supervisor(self) -> None:
        """Restart the exporter whenever it exits (it does when the coordinator goes away)."""
        while not self._stop.wait(0.5):
            if self.supervise and self.exporter is not None and self.exporter.poll() is not None:
                self.restarts += 1
                self.start_exporter()

    def wait_for_resources(self, count: int, deadline_s: float = 30) -> None:
        deadline = time.monotonic() + deadline_s
        while time.monotonic() < deadline:
            listed = self.client("resources").stdout.split()
            if len([line for line in listed if line.endswith("/NetworkService")]) >= count:
                return
            time.sleep(0.3)
        raise AssertionError(f"the exporter did not publish {count} resources: {self.log('exporter')}")

    def log(self, name: str) -> str:
        path = self.workdir / f"{name}.log"
        return path.read_text(errors="replace")[-3000:] if path.exists() else ""

    def stop(self) -> None:
        self._stop.set()
        for proc in (self.exporter, self.coordinator):
            if proc is not None and proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()


EXPORTER_CONFIG = """\
## labgrid-exporter resources: a Jinja2 template, where `#` starts a statement ("##" a comment)
{% for name, port in TWINS %}
{{ name }}:
  NetworkService:
    address: 127.0.0.1
    username: root
    port: {{ port }}
{% endfor %}
"""


@pytest.fixture(scope="module")
def lab(twin_factory, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    work = tmp_path_factory.mktemp("labgrid")
    assets = imx95_assets(work / "assets")
    twins = {name: twin_factory(imx95_spec(HEALTHY, assets)) for name in ("twin-a", "twin-b")}
    identity, known_hosts = fleet_access(list(twins.values()), work / "access")
    ports = ", ".join(f"({name!r}, {t.port})" for name, t in twins.items())
    config = work / "exporter.yaml"
    config.write_text(EXPORTER_CONFIG.replace("TWINS", f"[{ports}]"))
    lab = Lab(
        workdir=work,
        address=f"127.0.0.1:{free_port()}",
        places={name: twin.target for name, twin in twins.items()},
        identity=identity,
        known_hosts=known_hosts,
        profile=imx95_twin_profile(work / "profile"),
        exporter_config=config,
    )
    coordinator_dir = work / "coordinator"  # it keeps places.yaml in its working directory
    coordinator_dir.mkdir()
    lab.coordinator = subprocess.Popen(
        [tool("labgrid-coordinator"), "-l", lab.address],
        cwd=coordinator_dir,
        stdout=(work / "coordinator.log").open("wb"),
        stderr=subprocess.STDOUT,
    )
    supervisor = threading.Thread(target=lab.supervisor, daemon=True)
    try:
        deadline = time.monotonic() + 30
        host, port = lab.address.split(":")
        while socket.socket().connect_ex((host, int(port))) != 0:
            assert time.monotonic() < deadline, lab.log("coordinator")
            time.sleep(0.2)
        lab.start_exporter()
        supervisor.start()
        lab.wait_for_resources(len(twins))
        for name in twins:
            lab.must("-p", name, "create")
            lab.must("-p", name, "add-match", f"twins/{name}/NetworkService")
            lab.must("-p", name, "set-tags", *(f"{k}={v}" for k, v in TAGS.items()), f"twin={name}")
        yield lab
    finally:
        lab.stop()
        if supervisor.is_alive():
            supervisor.join(5)


def write_env(path: Path, places: dict[str, str], identity: Path) -> Path:
    """A labgrid environment whose targets are RemotePlaces (no coordinator_address: the option)."""
    targets = {
        role: {
            "resources": {"RemotePlace": {"name": place}},
            "drivers": {"SSHDriver": {"keyfile": str(identity)}},
        }
        for role, place in places.items()
    }
    path.write_text(yaml.safe_dump({"options": {"npu_board": "imx95-verdin"}, "targets": targets}))
    return path


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str
    artifacts: Path
    junit: Path

    @property
    def summary(self) -> dict:
        return json.loads((self.artifacts / "summary.json").read_text())


def run_suite(
    lab: Lab,
    env_file: Path,
    work: Path,
    user: str = "ci",
    coordinator: str | None = "lab",
    token: str | None = None,
    autoload: bool = False,
) -> Run:
    """The suite as a lab user runs it: --lg-env and --lg-coordinator, no LG_COORDINATOR."""
    work.mkdir(parents=True, exist_ok=True)
    argv = [
        sys.executable,
        "-m",
        "pytest",
        "pytests",
        "-p",
        "no:cacheprovider",
        "-q",
        "--lg-env",
        str(env_file),
    ]
    if coordinator:
        argv += ["--lg-coordinator", lab.address if coordinator == "lab" else coordinator]
    argv += ["--board", str(lab.profile), "--known-hosts", str(lab.known_hosts)]
    argv += ["--junitxml", str(work / "junit.xml"), "--artifacts", str(work / "artifacts")]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "LG_"))}
    env["LG_USERNAME"] = user
    if token:
        env["LG_TOKEN"] = token
    if not autoload:  # labgrid's own pytest plugin off: the suite's plugin adds --lg-env itself
        env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    done = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True, timeout=600, check=False)
    return Run(done.returncode, done.stdout, done.stderr, work / "artifacts", work / "junit.xml")


def refusal(run: Run) -> str:
    """The one sentence of a usage error (exit 4), checked to be one line and no traceback."""
    assert run.returncode == 4, run.stdout[-2000:] + run.stderr[-2000:]
    assert "Traceback" not in run.stderr + run.stdout, run.stderr
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("ERROR: "), run.stderr
    return lines[0].removeprefix("ERROR: ")


def test_two_acquired_places_are_a_fleet_keyed_by_place(lab: Lab, tmp_path: Path) -> None:
    """Both places acquired by the user: a two-board fleet; labgrid's own pytest plugin is loaded
    (it owns --lg-coordinator) and the option still reaches the suite's environment."""
    for name in lab.places:
        lab.must("-p", name, "acquire")
    try:
        env_file = write_env(tmp_path / "fleet.yaml", {"main": "twin-a", "second": "twin-b"}, lab.identity)
        run = run_suite(lab, env_file, tmp_path / "fleet", autoload=True)
        assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
        cases = read_junit(run.junit)
        assert {c.target for c in cases} == set(lab.places.values())
        assert len(cases) == 20 and all(c.status == "pass" for c in cases), cases
        summary = run.summary
        for name, target in lab.places.items():
            assert summary[target]["place"] == {
                "name": name,
                "tags": {**TAGS, "twin": name},
                "coordinator": lab.address,
            }
            assert summary[target]["accepted"] is True
        shown = "place twin-a (board=imx95-twin, lab=ci, twin=twin-a)"
        assert f"## {lab.places['twin-a']} — {shown}" in (run.artifacts / "report.md").read_text()
        assert shown in (run.artifacts / "report.html").read_text()
        junit = run.junit.read_text()
        assert '<property name="place" value="twin-b (board=imx95-twin, lab=ci, twin=twin-b)"' in junit
        # The twin of --lg-coordinator: without it the suite dials labgrid's default address.
        if socket.socket().connect_ex(("127.0.0.1", 20408)) != 0:
            default = refusal(run_suite(lab, env_file, tmp_path / "default", coordinator=None, autoload=True))
            assert default.startswith("The labgrid coordinator 127.0.0.1:20408 (place twin-a in "), default
    finally:
        for name in lab.places:
            lab.must("-p", name, "release")


def test_a_place_the_user_may_not_use_is_one_sentence(lab: Lab, tmp_path: Path) -> None:
    env_file = write_env(tmp_path / "one.yaml", {"main": "twin-b"}, lab.identity)
    c = f"labgrid-client -x {lab.address}"
    not_acquired = refusal(run_suite(lab, env_file, tmp_path / "not-acquired"))
    assert not_acquired == (
        f"labgrid place twin-b on {lab.address} is not acquired; run `{c} -p twin-b acquire` (or queue "
        f"with `{c} reserve --wait name=twin-b`) before the suite, which never acquires a place itself."
    )
    lab.must("-p", "twin-b", "acquire", user="alice")
    try:
        held = refusal(run_suite(lab, env_file, tmp_path / "held"))
        host = socket.gethostname()
        assert held == (
            f"labgrid place twin-b on {lab.address} is held by {host}/alice, not by {host}/ci; wait until "
            f"{host}/alice runs `{c} -p twin-b release` (queue with `{c} reserve --wait name=twin-b`), "
            f"or ask it to run `{c} -p twin-b allow {host}/ci`."
        )
    finally:
        lab.must("-p", "twin-b", "release", user="alice")
    unknown = refusal(
        run_suite(lab, write_env(tmp_path / "u.yaml", {"main": "nope"}, lab.identity), tmp_path / "u")
    )
    assert unknown.startswith(f"labgrid place nope in {tmp_path / 'u.yaml'} is unknown to the coordinator ")
    assert "(its places: twin-a, twin-b); create it with" in unknown
    several = refusal(
        run_suite(lab, write_env(tmp_path / "s.yaml", {"main": "twin"}, lab.identity), tmp_path / "s")
    )
    assert "matches several places on" in several and "(twin-a, twin-b)" in several
    down = refusal(run_suite(lab, env_file, tmp_path / "down", coordinator=f"127.0.0.1:{free_port()}"))
    assert re.fullmatch(
        r"The labgrid coordinator 127\.0\.0\.1:\d+ \(place twin-b in .*\) cannot be reached; start "
        r"labgrid-coordinator there, or give its address with --lg-coordinator HOST:PORT "
        r"\(or LG_COORDINATOR\)\.",
        down,
    ), down


def reserve(lab: Lab, user: str, *filters: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LG_")}
    env.update(LG_COORDINATOR=lab.address, LG_USERNAME=user)
    return subprocess.Popen(
        [tool("labgrid-client"), "reserve", "--wait", "--shell", *filters],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def token_of(proc: subprocess.Popen[str], timeout: float = 60) -> str:
    out, err = proc.communicate(timeout=timeout)
    match = re.search(r"export LG_TOKEN=(\S+)", out)
    assert proc.returncode == 0 and match, out + err
    return match.group(1)


def test_the_reservation_queue_serves_one_user_after_the_other(lab: Lab, tmp_path: Path) -> None:
    """`reserve --wait twin=twin-a` twice: the first is allocated, the suite runs on `+` with its
    LG_TOKEN; the second waits until the first releases and cancels its reservation."""
    first = token_of(reserve(lab, "ci", "twin=twin-a"))
    lab.must("-p", "+", "acquire", token=first)
    second = reserve(lab, "bob", "twin=twin-a")
    try:
        env_file = write_env(tmp_path / "token.yaml", {"main": "+"}, lab.identity)
        run = run_suite(lab, env_file, tmp_path / "first", token=first)
        assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
        assert run.summary[lab.places["twin-a"]]["place"]["name"] == "twin-a"
        assert second.poll() is None, "the second reservation was allocated while the first held the place"
        # The second user's token is not allocated yet: the suite says so (no place for `+`).
        refused = refusal(run_suite(lab, env_file, tmp_path / "early", user="bob", token="0" * 12))
        assert refused.startswith("The labgrid reservation token 000000000000 in "), refused
    finally:
        lab.must("-p", "+", "release", token=first)
        lab.must("cancel-reservation", first)
    token = token_of(second)
    assert token != first
    lab.must("-p", "+", "acquire", user="bob", token=token)
    try:
        shown = lab.must("-p", "+", "show", user="bob", token=token)
        assert "Place 'twin-a'" in shown and "/bob" in shown
    finally:
        lab.must("-p", "+", "release", user="bob", token=token)
        lab.must("cancel-reservation", token, user="bob")


def test_an_exporter_that_left_is_one_sentence_and_comes_back(lab: Lab, tmp_path: Path) -> None:
    lab.must("-p", "twin-a", "acquire")
    try:
        lab.supervise = False
        assert lab.exporter is not None
        lab.exporter.terminate()
        lab.exporter.wait(10)
        deadline = time.monotonic() + 20
        while "twins/twin-a/NetworkService" in lab.client("resources").stdout:
            assert time.monotonic() < deadline, "the coordinator kept the resources of a stopped exporter"
            time.sleep(0.3)
        env_file = write_env(tmp_path / "a.yaml", {"main": "twin-a"}, lab.identity)
        gone = refusal(run_suite(lab, env_file, tmp_path / "gone"))
        assert gone == (
            f"labgrid place twin-a on {lab.address} has lost its resources (their exporter "
            "disconnected); restart labgrid-exporter, then run the suite again."
        ), gone
    finally:
        lab.supervise = True
        lab.wait_for_resources(2)
        lab.must("-p", "twin-a", "release")
    assert lab.restarts >= 1


def test_an_exporter_that_vanishes_mid_run_does_not_stop_the_run(lab: Lab, tmp_path: Path) -> None:
    """The suite reads the place's address at start, then talks SSH: the exporter going away
    while the boards are examined changes nothing, and every board is reported."""
    for name in lab.places:
        lab.must("-p", name, "acquire")
    try:
        env_file = write_env(tmp_path / "fleet.yaml", {"main": "twin-a", "second": "twin-b"}, lab.identity)
        work = tmp_path / "mid-run"
        argv = [sys.executable, "-m", "pytest", "pytests", "-p", "no:cacheprovider", "-q"]
        argv += ["--lg-env", str(env_file), "--lg-coordinator", lab.address, "--board", str(lab.profile)]
        argv += ["--known-hosts", str(lab.known_hosts), "--junitxml", str(work / "junit.xml")]
        argv += ["--artifacts", str(work / "artifacts")]
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "LG_"))}
        env.update(LG_USERNAME="ci", PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
        suite = subprocess.Popen(
            argv, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        # The suite's own configure makes --artifacts once the lab plugin has turned the places
        # into targets: from then on the exporter is not needed.
        deadline = time.monotonic() + 120
        while not (work / "artifacts").exists():
            assert suite.poll() is None and time.monotonic() < deadline, suite.communicate()
            time.sleep(0.05)
        lab.supervise = False
        assert lab.exporter is not None
        lab.exporter.terminate()
        lab.exporter.wait(10)
        out, err = suite.communicate(timeout=600)
        assert suite.returncode == 0, out[-3000:] + err[-2000:]
        summary = json.loads((work / "artifacts" / "summary.json").read_text())
        assert {s["place"]["name"] for s in summary.values()} == {"twin-a", "twin-b"}
        assert all(s["accepted"] for s in summary.values())
    finally:
        lab.supervise = True
        lab.wait_for_resources(2)
        for name in lab.places:
            lab.must("-p", name, "release")

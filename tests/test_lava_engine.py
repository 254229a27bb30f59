# SPDX-License-Identifier: MIT
"""The project's LAVA job run by LAVA itself: Debian 12's LAVA 2023.01 (lava-server under gunicorn
on 127.0.0.1, lava-scheduler, one lava-worker, PostgreSQL 15, a docker test shell) judges board
twins, one LAVA device per twin.

The fixture configures the host's PostgreSQL cluster and /etc/lava-server (device types, device
dictionaries, the health check) — what a lab admin does once — so it runs only where that is
wanted: set NPU_LAVA_ENGINE=1 (.ci/run does, on its throw-away Debian 12). No lava-publisher (it
binds 0.0.0.0:5500) and no apache: LAVA's XML-RPC is served by gunicorn alone.

The suite's test-shell image is built without a registry: `docker import` of a tarball holding
only the merged-/usr symlinks, the rest bind-mounted read-only from the worker (the device
dictionary's docker options), and the job says `local: true`.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import tempfile
import time
import xmlrpc.client
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

from npu_accept.flash.spec import load_flash_spec
from npu_accept.lab.lava import DEVICE_TYPES_DIR, render_job
from npu_accept.sim.harness import fleet_access
from npu_accept.sim.imx95 import A0_FIELD_REPORT, HEALTHY, imx95_assets, imx95_spec, imx95_twin_profile

REPO = Path(__file__).resolve().parent.parent
ENABLED = os.environ.get("NPU_LAVA_ENGINE") == "1"
pytestmark = pytest.mark.skipif(
    not ENABLED,
    reason="the LAVA engine test configures this host's PostgreSQL and /etc/lava-server; "
    "set NPU_LAVA_ENGINE=1 to run it (.ci/run does, on a throw-away Debian 12)",
)
SYSTEM_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"  # LAVA's scripts run "python3": Debian's, not a venv's
DEVICE_TYPE = "npu-twin"
LAVA_ETC = Path("/etc/lava-server/dispatcher-config")
IMAGE = "meta-npu-suite-twin"
SUITE_SECONDS = 900  # a job's whole life, queue included


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def system_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "VIRTUAL_ENV", "PYTHON"))}
    env["PATH"] = SYSTEM_PATH
    env.update(extra)
    return env


def sh(*argv: str, timeout: float = 300, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        list(argv), env=env or system_env(), capture_output=True, text=True, timeout=timeout, check=False
    )
    assert done.returncode == 0, f"{' '.join(argv)}: {done.stdout[-2000:]}{done.stderr[-2000:]}"
    return done.stdout


def need(tool: str) -> str:
    for directory in SYSTEM_PATH.split(":"):
        if (Path(directory) / tool).exists():
            return str(Path(directory) / tool)
    pytest.fail(
        f"{tool} is missing; apt-get install lava-server lava-dispatcher lavacli docker.io "
        "postgresql (.ci/apt-packages.txt).",
        pytrace=False,
    )


@dataclass
class Lava:
    work: Path
    url: str
    token: str
    worker: str
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @property
    def rpc(self) -> xmlrpc.client.ServerProxy:
        host = self.url.removeprefix("http://")
        return xmlrpc.client.ServerProxy(f"http://admin:{self.token}@{host}RPC2", allow_none=True)

    def manage(self, *args: str, timeout: float = 300) -> str:
        return sh(need("lava-server"), "manage", *args, timeout=timeout)

    def spawn(self, name: str, argv: list[str], env: dict[str, str] | None = None) -> None:
        log = (self.work / f"{name}.out").open("wb")
        self.procs.append(
            subprocess.Popen(
                argv, env=env or system_env(), stdout=log, stderr=subprocess.STDOUT, cwd=self.work
            )
        )

    def log(self, name: str) -> str:
        path = self.work / name
        return path.read_text(errors="replace")[-4000:] if path.exists() else f"({name} missing)"

    def add_device_type(self, name: str) -> None:
        shutil.copy(DEVICE_TYPES_DIR / f"{name}.jinja2", LAVA_ETC / "device-types")
        if f"* {name} (" not in self.manage("device-types", "list"):  # installed ones only
            self.manage("device-types", "add", name)

    def add_device(
        self, hostname: str, dictionary: str, health: str = "GOOD", device_type: str = DEVICE_TYPE
    ) -> None:
        (LAVA_ETC / "devices" / f"{hostname}.jinja2").write_text(dictionary)
        existing = self.manage("devices", "list", "--all")
        if hostname not in existing.split():
            self.manage("devices", "add", "--device-type", device_type, "--worker", self.worker, hostname)
        self.manage("devices", "update", "--worker", self.worker, "--health", health, hostname)

    def wait_job(self, job_id: int, deadline_s: float = SUITE_SECONDS) -> dict:
        deadline = time.monotonic() + deadline_s
        while time.monotonic() < deadline:
            state = self.rpc.scheduler.job_state(job_id)
            if state["job_state"] == "Finished":
                return self.rpc.scheduler.jobs.show(job_id)
            time.sleep(2)
        raise AssertionError(
            f"LAVA job {job_id} did not finish in {deadline_s} s: "
            f"{self.rpc.scheduler.job_state(job_id)}\n{self.log('worker.log')}\n{self.log('scheduler.log')}"
        )

    def results(self, job_id: int) -> dict[str, dict]:
        cases = yaml.safe_load(self.rpc.results.get_testjob_results_yaml(job_id))
        return {c["name"]: c for c in cases if c["suite"] != "lava"}

    def lava_suite(self, job_id: int) -> dict[str, dict]:
        cases = yaml.safe_load(self.rpc.results.get_testjob_results_yaml(job_id))
        return {c["name"]: c for c in cases if c["suite"] == "lava"}

    def job_log(self, job_id: int) -> str:
        path = next(
            Path("/var/lib/lava-server/default/media/job-output").glob(f"*/*/*/{job_id}/output.yaml"), None
        )
        return path.read_text(errors="replace") if path else "(no output.yaml)"

    def stop(self) -> None:
        started = time.monotonic()
        for proc in reversed(self.procs):
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(5)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        (self.work / "stop-seconds").write_text(f"{time.monotonic() - started:.1f}\n")


def postgres_up() -> None:
    clusters = sh(need("pg_lsclusters"), "-h")
    if not clusters.strip():
        sh(need("pg_createcluster"), "15", "main")
        clusters = sh(need("pg_lsclusters"), "-h")
    version, name, _port, status = clusters.split()[:4]
    if status != "online":
        sh(need("pg_ctlcluster"), version, name, "start")


def lava_configured() -> bool:
    if not Path("/etc/lava-server/settings.d/00-database.yaml").is_file():
        return False
    check = subprocess.run(
        [need("lava-server"), "manage", "showmigrations", "lava_scheduler_app"],
        env=system_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return check.returncode == 0 and "[ ]" not in check.stdout


def docker_up(work: Path) -> None:
    """The host's dockerd, or one of our own on the default socket (lava-run purges its
    environment, so DOCKER_HOST would not reach it), loopback only: no bridge, no iptables."""
    if (
        subprocess.run(
            [need("docker"), "info"], env=system_env(), capture_output=True, check=False
        ).returncode
        == 0
    ):
        return
    log = (work / "dockerd.log").open("wb")
    subprocess.Popen(
        [
            need("dockerd"),
            "--data-root",
            str(work / "docker-data"),
            "--exec-root",
            str(work / "docker-exec"),
            "--pidfile",
            str(work / "dockerd.pid"),
            "--iptables=false",
            "--ip6tables=false",
            "--bridge=none",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while subprocess.run(
        [need("docker"), "info"], env=system_env(), capture_output=True, check=False
    ).returncode:
        assert time.monotonic() < deadline, (work / "dockerd.log").read_text()[-3000:]
        time.sleep(0.5)


def stop_dockerd(work: Path) -> None:
    """Stop our own dockerd (if we started one) and drop the mounts it leaves under `work`."""
    pidfile = work / "dockerd.pid"
    if not pidfile.exists():
        return
    pid = int(pidfile.read_text().strip())
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 10
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)  # containerd's shims take their time; nothing is kept
    mounted = [line.split()[1] for line in Path("/proc/mounts").read_text().splitlines()]
    for point in sorted((m for m in mounted if m.startswith(f"{work}/")), reverse=True):
        subprocess.run(["umount", "-l", point], capture_output=True, check=False)


def suite_image() -> None:
    """An image of merged-/usr symlinks and empty mount points, imported from a tarball (no registry)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        # /sbin a directory, not the merged-/usr link: docker --init mounts its docker-init there
        for name in ("usr", "etc", "tmp", "root", "proc", "sys", "dev", "run", "var", "var/tmp", "sbin"):
            info = tarfile.TarInfo(name)
            info.type, info.mode = tarfile.DIRTYPE, 0o1777 if name.endswith("tmp") else 0o755
            tar.addfile(info)
        for name in ("bin", "lib", "lib64"):
            if Path(f"/{name}").is_symlink():
                info = tarfile.TarInfo(name)
                info.type, info.linkname = tarfile.SYMTYPE, os.readlink(f"/{name}")
                tar.addfile(info)
    done = subprocess.run(
        [need("docker"), "import", "-", IMAGE],
        input=buffer.getvalue(),
        env=system_env(),
        capture_output=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()


def mounts(*paths: Path) -> list[str]:
    """docker run options: the worker's /usr and /etc, and the suite's checkout, venv and twins."""
    seen: list[str] = []
    for path in ("/usr", "/etc", *map(str, paths)):
        if not any(path == s or path.startswith(s.rstrip("/") + "/") for s in seen):
            seen.append(path)
    options = ["--network=host"]
    for path in seen:
        options += ["-v", f"{path}:{path}:ro"]
    return options


@pytest.fixture(scope="module")
def lava(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lava]:
    if os.geteuid() != 0:
        pytest.fail("The LAVA engine test needs root (PostgreSQL, lava-worker, docker).", pytrace=False)
    # lava-scheduler drops to the lavaserver user: its logs live where that user may write, not
    # under pytest's root-only temporary directory.
    work = Path(tempfile.mkdtemp(prefix="npu-lava-"))
    work.chmod(0o777)
    started = time.monotonic()
    postgres_up()
    if not lava_configured():
        sh(need("dpkg-reconfigure"), "-fnoninteractive", "lava-server", timeout=600)
    assert lava_configured(), "lava-server's database is not migrated after dpkg-reconfigure lava-server"
    users = subprocess.run(
        [need("lava-server"), "manage", "users", "list"],
        env=system_env(),
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    lava_host = f"127.0.0.1:{free_port()}"
    lab = Lava(work, f"http://{lava_host}/", "", "npu-worker")
    if "admin" not in users.split():
        lab.manage("users", "add", "--superuser", "--staff", "--passwd", "admin", "admin")
    lab.token = lab.manage("tokens", "add", "--user", "admin").strip().splitlines()[-1]
    try:
        docker_up(work)
        suite_image()
        lab.spawn(
            "gunicorn",
            [
                need("gunicorn3"),
                "lava_server.wsgi",
                "--bind",
                lava_host,
                "--workers",
                "2",
                "--worker-class",
                "eventlet",
                "-u",
                "lavaserver",
                "-g",
                "lavaserver",
                "--log-file",
                str(work / "gunicorn.log"),
            ],
        )
        lab.spawn(
            "scheduler",
            [
                need("lava-server"),
                "manage",
                "lava-scheduler",
                "--level",
                "DEBUG",
                "--log-file",
                str(work / "scheduler.log"),
            ],
        )
        if f"* {lab.worker} (" not in lab.manage("workers", "list", "-a"):
            lab.manage("workers", "add", lab.worker)
        details = lab.manage("workers", "details", lab.worker).splitlines()
        worker_token = next(line.split(":", 1)[1].strip() for line in details if line.startswith("token"))
        (work / "worker" / "tmp").mkdir(parents=True)  # lava-worker makes tmp/JOB, not tmp
        for state in ("Submitted", "Scheduling", "Scheduled", "Running", "Canceling"):
            listed = lab.manage("jobs", "list", "--state", state.upper())
            for job_id in re.findall(r" - (\d+)@", listed):  # an earlier, interrupted run's jobs
                lab.manage("jobs", "fail", job_id)
        lab.spawn(
            "worker",
            [
                need("lava-worker"),
                "--name",
                lab.worker,
                "--url",
                lab.url,
                "--token",
                worker_token,
                "--worker-dir",
                str(work / "worker"),
                "--log-file",
                str(work / "worker.log"),
                "--level",
                "DEBUG",
            ],
        )
        lab.add_device_type(DEVICE_TYPE)
        # No health check until the test that wants one writes it (an earlier run's would name
        # twins that are gone, and take the devices out before the first job).
        (LAVA_ETC / "health-checks" / f"{DEVICE_TYPE}.yaml").unlink(missing_ok=True)
        deadline = time.monotonic() + 120
        while True:
            try:
                if lab.rpc.scheduler.workers.show(lab.worker)["state"] == "Online":
                    break
            except (OSError, xmlrpc.client.Error):
                pass
            assert time.monotonic() < deadline, lab.log("gunicorn.log") + lab.log("worker.log")
            time.sleep(1)
        (work / "startup-seconds").write_text(f"{time.monotonic() - started:.1f}\n")
        yield lab
    finally:
        lab.stop()
        stop_dockerd(work)


@dataclass
class Fleet:
    twins: dict[str, object]  # LAVA hostname -> twin
    identity: Path
    known_hosts: Path
    profile: Path


@pytest.fixture(scope="module")
def fleet(lava: Lava, twin_factory, tmp_path_factory: pytest.TempPathFactory) -> Fleet:
    work = tmp_path_factory.mktemp("lava-twins")
    work.chmod(0o755)
    assets = imx95_assets(work / "assets")
    boards = {"npu-twin-01": HEALTHY, "npu-twin-02": A0_FIELD_REPORT, "npu-twin-03": HEALTHY}
    twins = {name: twin_factory(imx95_spec(board, assets)) for name, board in boards.items()}
    identity, known_hosts = fleet_access(list(twins.values()), work / "access")
    profile = imx95_twin_profile(work / "profile")
    options = mounts(
        REPO, Path(sys.prefix), Path(sys.base_prefix), work, *(t.directory for t in twins.values())
    )
    for name, twin in twins.items():
        console = (
            f"ssh -tt -o BatchMode=yes -o UserKnownHostsFile={known_hosts} -i {identity} "
            f"-p {twin.port} root@{twin.host}"
        )
        if name == "npu-twin-03":  # a serial console of its own: it outlives the board's sshd
            init = twin._init_pid()  # noqa: SLF001 - the twin's namespace, as its harness enters it
            console = (
                f"nsenter --target {init} --mount --uts --pid -- "
                f"chroot {twin.directory}/mnt/root /bin/bash -i"
            )
        dictionary = (
            f"{{% extends '{DEVICE_TYPE}.jinja2' %}}\n"
            f"{{% set connection_command = {json.dumps(console)} %}}\n"
            f"{{% set static_info = [{{'npu_target': {json.dumps(twin.target)}}}] %}}\n"
            f"{{% set docker_test_options = {json.dumps(options)} %}}\n"
        )
        lava.add_device(name, dictionary, health="MAINTENANCE" if name == "npu-twin-03" else "GOOD")
    return Fleet(twins, identity, known_hosts, profile)


def job_for(fleet: Fleet, name: str = "twin") -> str:
    spec = load_flash_spec("imx95-verdin")
    job = render_job(
        spec,
        {
            "device_type": DEVICE_TYPE,
            "suite_image": IMAGE,
            "suite_image_local": "true",
            "checkout": str(REPO),
            "python": sys.executable,
            "identity": str(fleet.identity),
            "known_hosts": str(fleet.known_hosts),
            "job_minutes": "15",
            "boot_minutes": "1",
            "test_minutes": "10",
        },
        shell=True,
    )
    data = job.data
    data["job_name"] = f"meta-npu {name}"
    step = data["actions"][-1]["test"]["definitions"][0]["repository"]["run"]["steps"]
    # The twins' profile (a path) instead of the shipped imx95-verdin one, as the twin tests do.
    step[3] = step[3].replace("--board imx95-verdin", f"--board {fleet.profile}")
    return yaml.safe_dump(data, sort_keys=False)


def test_two_devices_of_one_type_are_each_judged_as_themselves(lava: Lava, fleet: Fleet) -> None:
    ids = [lava.rpc.scheduler.submit_job(job_for(fleet, f"job-{n}")) for n in range(2)]
    ids = [i[0] if isinstance(i, list) else i for i in ids]
    seen = set()
    for job_id in ids:
        job = lava.wait_job(int(job_id))
        device = job["device"]
        seen.add(device)
        results = lava.results(int(job_id))
        checks = {name: case["result"] for name, case in results.items()}
        assert job["health"] == "Complete", (job, lava.job_log(int(job_id))[-6000:])
        assert len(checks) == 10, checks
        if device == "npu-twin-01":
            assert set(checks.values()) == {"pass"}, checks
        else:
            assert device == "npu-twin-02"
            assert checks["silicon"] == "fail" and checks["outputs"] == "fail", checks
            assert "i.MX95 A0 (revision 1.0)" in lava.job_log(int(job_id))
    assert seen == {"npu-twin-01", "npu-twin-02"}


def test_an_unreachable_board_fails_its_health_check(lava: Lava, fleet: Fleet) -> None:
    """The suite's exit 3 (no board reachable) -> lava-test-raise -> the health check is
    Incomplete -> LAVA marks the device Bad; the healthy twins' health checks keep them Good."""
    finished = lava.rpc.scheduler.jobs.list(None, None, 0, 1, 0, False)
    first_id = int(finished[0]["id"]) if finished else 0
    (LAVA_ETC / "health-checks" / f"{DEVICE_TYPE}.yaml").write_text(job_for(fleet, "health check"))
    fleet.twins["npu-twin-03"].kill_sshd()  # the board's network is gone, its console is not
    lava.manage("devices", "update", "--health", "UNKNOWN", "npu-twin-03")  # asks for a health check
    deadline = time.monotonic() + SUITE_SECONDS
    while True:
        device = lava.rpc.scheduler.devices.show("npu-twin-03")
        if device["health"] in ("Bad", "Good"):
            break
        assert time.monotonic() < deadline, device
        time.sleep(2)
    jobs = lava.rpc.scheduler.jobs.list("Finished", None, 0, 100, 0, True)
    checks = [j for j in jobs if j.get("actual_device") == "npu-twin-03" and int(j["id"]) > first_id]
    assert device["health"] == "Bad", (device, checks)
    assert checks, f"no health check ran on npu-twin-03: {jobs[:5]}"
    job_id = int(max(checks, key=lambda j: int(j["id"]))["id"])
    job = lava.rpc.scheduler.jobs.show(job_id)
    assert job["health_check"] is True and job["health"] == "Incomplete", job
    log = lava.job_log(job_id)
    assert "LAVA_SIGNAL_TESTRAISE npu-accept-exit-3 board root@127.0.0.1:" in log, log[-4000:]
    for healthy in ("npu-twin-01", "npu-twin-02"):
        assert lava.rpc.scheduler.devices.show(healthy)["health"] == "Good"


BOARD_VARIABLES = {
    "image_url": "https://ci.example.com/images/npu-image.rootfs.wic.zst",
    "boot_url": "https://ci.example.com/images/imx-boot-imx95-19x19-verdin-sd.bin-flash_a55",
    "loader_url": "https://ci.example.com/images/rk3588_spl_loader_v1.05.108.bin",
    "suite_image": "registry.example.com/meta-npu/suite:1",
}


def test_every_boards_device_type_and_job_are_taken_by_lava(lava: Lava) -> None:
    """Each board's device type installed in lava-server and rendered by it for a device (kept in
    Maintenance: no hardware here), and the board's job accepted at submission; the job of a
    board whose type lava-server lacks is refused with LAVA's own sentence."""
    boards = sorted(p.stem for p in DEVICE_TYPES_DIR.glob("*.jinja2") if p.stem != DEVICE_TYPE)
    for board in boards:
        lava.add_device_type(board)
        hostname = f"{board}-01"
        lava.add_device(
            hostname,
            f"{{% extends '{board}.jinja2' %}}\n"
            "{% set static_info = [{'npu_target': 'root@192.0.2.10'}] %}\n"
            "{% set flasher_device = '/dev/disk/by-id/usb-reader-0:0' %}\n",
            health="MAINTENANCE",
            device_type=board,
        )
        rendered = yaml.safe_load(lava.rpc.scheduler.devices.get_dictionary(hostname, True).data)
        assert rendered["static_info"] == [{"npu_target": "root@192.0.2.10"}], rendered
        spec = load_flash_spec(board)
        job = render_job(spec, {**BOARD_VARIABLES, "device_type": board})
        job_id = lava.rpc.scheduler.submit_job(job.text)
        job_id = job_id[0] if isinstance(job_id, list) else job_id
        assert lava.rpc.scheduler.jobs.show(job_id)["device_type"] == board
        lava.rpc.scheduler.jobs.cancel(job_id)
    spec = load_flash_spec("imx95-verdin")
    missing = render_job(spec, {**BOARD_VARIABLES, "device_type": "imx95-verdin-unshipped"})
    with pytest.raises(xmlrpc.client.Fault, match="Device type 'imx95-verdin-unshipped' is unavailable"):
        lava.rpc.scheduler.submit_job(missing.text)

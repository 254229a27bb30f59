# SPDX-License-Identifier: MIT
"""Lab integration: labgrid environment templates parsed by labgrid itself and used by the real
suite (`--lg-env` instead of `--target`, end to end on an i.MX95 twin), and LAVA job templates
rendered for every board and validated with LAVA's own job schema (Debian `lava-common`)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from test_flash import FLASH_SECTIONS, board_profile
from twins.boards_run import read_junit

from npu_accept.flash.spec import load_flash_spec
from npu_accept.lab.errors import LabError
from npu_accept.lab.labgrid_env import load_environment
from npu_accept.lab.lava import main as lava_main
from npu_accept.lab.lava import render_job
from npu_accept.sim.imx95 import HEALTHY, imx95_assets, imx95_spec, imx95_twin_profile

REPO = Path(__file__).resolve().parent.parent
LABGRID_DIR = REPO / "lab" / "labgrid"
BOARDS = sorted(FLASH_SECTIONS)


def suite_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "LG_"))}
    env.update(extra)
    return env


def run_pytest(
    argv: list[str], env: dict[str, str], timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "pytests", "-p", "no:cacheprovider", "-q", *argv],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


# ------------------------------------------------------------------ labgrid


def test_every_board_has_a_labgrid_template() -> None:
    assert sorted(p.stem for p in LABGRID_DIR.glob("*.yaml")) == BOARDS


@pytest.mark.parametrize("board", BOARDS)
def test_labgrid_template_yields_the_ssh_target(
    board: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = tmp_path / "id_ed25519"
    key.write_text("not a real key\n")
    monkeypatch.setenv("LG_NPU_ADDRESS", "192.168.7.20")
    monkeypatch.setenv("LG_NPU_KEYFILE", str(key))
    lab = load_environment(LABGRID_DIR / f"{board}.yaml")
    assert [(t.role, t.target, t.identity) for t in lab.targets] == [("main", "root@192.168.7.20:22", key)]
    assert lab.board == board


def test_labgrid_fleet_ipv6_and_bad_environments(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LG_NPU_ADDRESS", raising=False)
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(
        yaml.safe_dump(
            {
                "targets": {
                    "main": {
                        "resources": {"NetworkService": {"address": "10.0.0.2", "username": "root"}},
                        "drivers": {"SSHDriver": {}},
                    },
                    "second": {
                        "resources": {
                            "NetworkService": {"address": "fd00::7", "username": "ci", "port": 2222}
                        },
                        "drivers": {"SSHDriver": {}},
                    },
                }
            }
        )
    )
    lab = load_environment(fleet)
    assert [t.target for t in lab.targets] == ["root@10.0.0.2:22", "ci@[fd00::7]:2222"]
    assert lab.board is None
    cases = {
        "no-service": ({"targets": {"main": {"drivers": {"SSHDriver": {}}}}}, "has no NetworkService"),
        "no-driver": (
            {"targets": {"main": {"resources": {"NetworkService": {"address": "h", "username": "u"}}}}},
            "has no SSHDriver",
        ),
        "no-targets": ({"options": {"npu_board": "x"}}, "defines no targets"),
    }
    for name, (data, fragment) in cases.items():
        path = tmp_path / f"{name}.yaml"
        path.write_text(yaml.safe_dump(data))
        with pytest.raises(LabError, match=fragment):
            load_environment(path)
    with pytest.raises(LabError, match="refers to unknown variable 'LG_NPU_ADDRESS'"):
        load_environment(LABGRID_DIR / "imx95-verdin.yaml")
    with pytest.raises(LabError, match="does not exist"):
        load_environment(tmp_path / "missing.yaml")


def test_suite_takes_targets_and_board_from_lg_env(tmp_path: Path) -> None:
    key = tmp_path / "key"
    key.write_text("x")
    env = suite_env(LG_NPU_ADDRESS="10.9.8.7", LG_NPU_KEYFILE=str(key))
    result = run_pytest(["--lg-env", str(LABGRID_DIR / "imx95-verdin.yaml"), "--collect-only"], env, 120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "pytests/test_2_silicon.py::test_silicon[root@10.9.8.7:22]" in result.stdout
    both = run_pytest(["--lg-env", str(LABGRID_DIR / "imx95-verdin.yaml"), "--target", "root@h"], env, 120)
    assert both.returncode != 0
    assert "either with --target or with --lg-env, not both" in both.stderr
    unset = run_pytest(["--lg-env", str(LABGRID_DIR / "imx95-verdin.yaml")], suite_env(), 120)
    assert unset.returncode != 0 and "Traceback" not in unset.stderr
    assert "unknown variable 'LG_NPU_ADDRESS'" in unset.stderr


def test_lg_env_without_labgrid_is_one_sentence(tmp_path: Path) -> None:
    """labgrid is optional: with it absent (a shadow package that fails to import, its pytest
    plugin off) --lg-env still exists and says how to install it."""
    shadow = tmp_path / "labgrid"
    shadow.mkdir()
    (shadow / "__init__.py").write_text("raise ImportError(\"No module named 'labgrid'\", name='labgrid')\n")
    env = suite_env(PYTHONPATH=f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    result = run_pytest(["-p", "no:labgrid", "--lg-env", str(LABGRID_DIR / "imx95-verdin.yaml")], env, 120)
    assert result.returncode != 0
    assert "--lg-env needs labgrid, which is not installed; pip install labgrid==26.0.1" in result.stderr
    assert "Traceback" not in result.stderr


def test_suite_accepts_a_twin_through_lg_env(twin_factory, tmp_path: Path) -> None:
    """End to end: the labgrid template (its port set to the twin's) drives the real suite."""
    assets = imx95_assets(tmp_path / "assets")
    profile = imx95_twin_profile(tmp_path / "profile")
    twin = twin_factory(imx95_spec(HEALTHY, assets))
    env_file = tmp_path / "imx95-twin.yaml"
    env_file.write_text(
        (LABGRID_DIR / "imx95-verdin.yaml").read_text().replace("port: 22", f"port: {twin.port}")
    )
    junit = tmp_path / "junit.xml"
    env = suite_env(LG_NPU_ADDRESS=twin.host, LG_NPU_KEYFILE=str(twin.identity))
    result = run_pytest(
        [
            "--lg-env",
            str(env_file),
            "--board",
            str(profile),
            "--known-hosts",
            str(twin.known_hosts),
            "--junitxml",
            str(junit),
            "--artifacts",
            str(tmp_path / "artifacts"),
        ],
        env,
    )
    cases = read_junit(junit) if junit.exists() else []
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert {c.target for c in cases} == {twin.target}
    assert len(cases) == 10 and all(c.status == "pass" for c in cases), cases


# ------------------------------------------------------------------ LAVA

VARIABLES = {
    "image_url": "https://ci.example.com/images/npu-image.rootfs.wic.zst",
    "boot_url": "https://ci.example.com/images/imx-boot-imx95-19x19-verdin-sd.bin-flash_a55",
    "loader_url": "https://ci.example.com/images/rk3588_spl_loader_v1.05.108.bin",
    "target": "root@192.168.7.20",
    "device_type": "npu-board",
    "suite_image": "registry.example.com/meta-npu/suite:1",
}


def lava_python() -> str:
    """An interpreter that imports LAVA's job schema (Debian lava-common installs it for /usr/bin/python3)."""
    for candidate in (sys.executable, "/usr/bin/python3"):
        if (
            shutil.which(candidate)
            and subprocess.run(
                [candidate, "-c", "import lava_common.schemas"], capture_output=True, check=False
            ).returncode
            == 0
        ):
            return candidate
    pytest.fail(
        "LAVA's job schema (lava_common) is not importable; apt-get install lava-common "
        "(.ci/apt-packages.txt).",
        pytrace=False,
    )


VALIDATE = """
import sys, yaml
from lava_common.schemas import validate, extra_checks
data = yaml.safe_load(sys.stdin)
try:
    validate(data, strict=True)
    extra_checks(data)
except Exception as exc:
    print(f"INVALID {type(exc).__name__}: {exc}")
    sys.exit(1)
print("VALID")
"""


def lava_validate(text: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [lava_python(), "-c", VALIDATE], input=text, capture_output=True, text=True, timeout=120, check=False
    )


@pytest.mark.parametrize("board", BOARDS)
def test_lava_job_renders_and_passes_lavas_schema(board: str, tmp_path: Path) -> None:
    spec = load_flash_spec(str(board_profile(board, tmp_path)))
    job = render_job(spec, VARIABLES)
    check = lava_validate(job.text)
    assert check.returncode == 0 and "VALID" in check.stdout, check.stdout + check.stderr
    actions = job.data["actions"]
    deploy = actions[0]["deploy"]
    assert deploy["to"] == ("uuu" if spec.method == "uuu" else "flasher")
    if spec.method == "uuu":
        assert actions[1]["boot"]["commands"] == [{"uuu": "-b emmc_all {boot} {system}"}]
    if spec.method == "rkdeveloptool":
        assert deploy["images"]["loader"]["url"] == VARIABLES["loader_url"]
    steps = actions[-1]["test"]["definitions"][0]["repository"]["run"]["steps"]
    assert steps[1] == "npu_target=root@192.168.7.20"
    assert f'--target "$npu_target" --board {board}' in steps[2]
    assert "--lava-signals" in steps[2]


def test_lava_schema_rejects_broken_jobs(tmp_path: Path) -> None:
    spec = load_flash_spec(str(board_profile("imx95-verdin", tmp_path)))
    data = render_job(spec, VARIABLES).data
    no_visibility = {k: v for k, v in data.items() if k != "visibility"}
    assert lava_validate(yaml.safe_dump(no_visibility)).returncode == 1
    data["actions"][0]["deploy"]["images"].pop("boot")
    assert "INVALID" in lava_validate(yaml.safe_dump(data)).stdout


def test_lava_values_are_quoted_and_missing_ones_named(tmp_path: Path) -> None:
    spec = load_flash_spec(str(board_profile("rk3588-evb", tmp_path)))
    tricky = {**VARIABLES, "target": "root@10.0.0.1; rm -rf /", "device_type": "a: b\nc: [d"}
    job = render_job(spec, tricky)
    assert job.data["device_type"] == "a: b\nc: [d"
    assert (
        job.data["actions"][-1]["test"]["definitions"][0]["repository"]["run"]["steps"][1]
        == "npu_target='root@10.0.0.1; rm -rf /'"
    )
    with pytest.raises(LabError, match="needs loader_url; pass --set loader_url="):
        render_job(spec, {k: v for k, v in VARIABLES.items() if k != "loader_url"})


def test_lava_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    profile = board_profile("milkv-duo256m", tmp_path)
    argv = ["--board", str(profile)] + [f"--set={k}={v}" for k, v in VARIABLES.items()]
    assert lava_main(argv) == 0
    assert lava_validate(capsys.readouterr().out).returncode == 0
    assert lava_main(["--board", str(profile), "--set", "image_url"]) == 1
    assert (
        capsys.readouterr().err.strip()
        == "lava: --set image_url is not NAME=VALUE; write it as --set image_url=https://…."
    )


# ------------------------------------------------------------------ CI pipeline example

PIPELINE = REPO / "lab" / "ci" / "github-actions.yml"


def test_ci_pipeline_example_is_consistent_and_its_scripts_pass_shellcheck(tmp_path: Path) -> None:
    data = yaml.safe_load(PIPELINE.read_text())
    jobs = data["jobs"]
    assert list(jobs) == ["build", "flash-and-accept"] and jobs["flash-and-accept"]["needs"] == "build"
    for job in jobs.values():
        boards = [entry["board"] for entry in job["strategy"]["matrix"]["include"]]
        for board in boards:
            assert (REPO / "kas" / f"{board}.yml").is_file(), board
            assert (LABGRID_DIR / f"{board}.yaml").is_file(), board
            assert board in FLASH_SECTIONS, board
    scripts = [step["run"] for job in jobs.values() for step in job["steps"] if "run" in step]
    assert any("npu-flash" in s for s in scripts) and any("--lg-env" in s for s in scripts)
    for index, script in enumerate(scripts):
        # GitHub substitutes ${{ … }} before bash runs the step; shellcheck sees a word (a glob, as some are)
        body = re.sub(r"\$\{\{[^}]*\}\}", "X*", script)
        path = tmp_path / f"step{index}.sh"
        path.write_text("#!/bin/bash -e\n" + body)
        check = subprocess.run(
            ["shellcheck", "-s", "bash", str(path)], capture_output=True, text=True, check=False
        )
        assert check.returncode == 0, check.stdout


# ------------------------------------------------------------------ LAVA: the target from the device

DEVICE_TYPES = REPO / "src" / "npu_accept" / "templates" / "lava" / "device-types"
LAVA_DEVICE_TYPES = Path("/usr/share/lava-server/device-types")  # Debian lava-server

VALIDATE_DEVICE = """
import sys, jinja2, yaml
from lava_common.schemas.device import validate
ours, dictionary = sys.argv[1], sys.stdin.read()
# lava-server renders a device dictionary this way (its dispatcher-config directory, then the
# packaged device types), then checks the result with the device schema.
env = jinja2.Environment(
    loader=jinja2.FileSystemLoader([ours, sys.argv[2]]), trim_blocks=True, autoescape=False
)
try:
    data = yaml.safe_load(env.from_string(dictionary).render())
    validate(data)
except Exception as exc:
    print(f"INVALID {type(exc).__name__}: {exc}")
    sys.exit(1)
print("VALID")
print(yaml.safe_dump(data))
"""


def lava_device(dictionary: str) -> subprocess.CompletedProcess[str]:
    if not (LAVA_DEVICE_TYPES / "imx9-common.jinja2").is_file():
        pytest.fail(
            f"LAVA's device types are missing ({LAVA_DEVICE_TYPES}); apt-get install lava-server "
            "(.ci/apt-packages.txt).",
            pytrace=False,
        )
    return subprocess.run(
        [lava_python(), "-c", VALIDATE_DEVICE, str(DEVICE_TYPES), str(LAVA_DEVICE_TYPES)],
        input=dictionary,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_every_board_has_a_lava_device_type() -> None:
    assert sorted(p.stem for p in DEVICE_TYPES.glob("*.jinja2")) == sorted([*BOARDS, "npu-twin"])
    assert "{% extends 'imx9-common.jinja2' %}" in (DEVICE_TYPES / "imx95-verdin.jinja2").read_text()


@pytest.mark.parametrize("device_type", sorted([*BOARDS, "npu-twin"]))
def test_lava_device_type_renders_and_passes_lavas_device_schema(device_type: str) -> None:
    dictionary = (
        f"{{% extends '{device_type}.jinja2' %}}\n"
        "{% set static_info = [{'npu_target': 'root@192.168.7.20'}] %}\n"
        "{% set connection_command = 'telnet 127.0.0.1 7000' %}\n"
        "{% set flasher_device = '/dev/disk/by-id/usb-reader-0:0' %}\n"
    )
    check = lava_device(dictionary)
    assert check.returncode == 0 and check.stdout.startswith("VALID"), check.stdout + check.stderr
    device = yaml.safe_load(check.stdout.split("\n", 1)[1])
    assert device["static_info"] == [{"npu_target": "root@192.168.7.20"}]
    spec_method = FLASH_SECTIONS.get(device_type, {}).get("method")
    deploy, boot = device["actions"]["deploy"]["methods"], device["actions"]["boot"]["methods"]
    assert "minimal" in boot
    if spec_method == "uuu":
        assert "uuu" in boot
    elif spec_method:
        commands = deploy["flasher"]["commands"]
        assert len(commands) == 1 and commands[0].startswith(
            f"npu-flash --board {device_type} --image {{IMAGE}}"
        )
        if spec_method == "rkdeveloptool":
            assert "--loader {LOADER}" in commands[0]
        else:
            assert (
                "--device /dev/disk/by-id/usb-reader-0:0 --force /dev/disk/by-id/usb-reader-0:0"
                in commands[0]
            )
    else:  # npu-twin: a device already booted
        assert device["commands"]["power_on"] == "/bin/true"
        assert device["actions"]["test"]["methods"]["docker"]["options"] == ["--network=host"]


def test_lavas_device_schema_rejects_a_broken_device_type(tmp_path: Path) -> None:
    """The twin of the check above: the same schema refuses a dictionary whose type lost its body."""
    check = lava_device("{% extends 'base.jinja2' %}\n{% block body %}actions: 7{% endblock body %}\n")
    assert check.returncode == 1 and "INVALID" in check.stdout, check.stdout + check.stderr


def steps_of(job) -> list[str]:
    return job.data["actions"][-1]["test"]["definitions"][0]["repository"]["run"]["steps"]


def test_lava_target_comes_from_the_device_and_the_shell_variant(tmp_path: Path) -> None:
    spec = load_flash_spec(str(board_profile("imx95-verdin", tmp_path)))
    from_device = {k: v for k, v in VARIABLES.items() if k != "target"}
    job = render_job(spec, from_device)
    assert lava_validate(job.text).returncode == 0
    steps = steps_of(job)
    assert steps[1] == 'npu_target="${LAVA_STATIC_INFO_0_npu_target:-}"'
    assert "lava-test-raise" in steps[2] and "static_info" in steps[2]
    shell = render_job(
        spec,
        {
            "device_type": "npu-twin",
            "suite_image": "meta-npu-suite",
            "suite_image_local": "true",
            "boot_minutes": "1",
            "test_minutes": "5",
        },
        shell=True,
    )
    check = lava_validate(shell.text)
    assert check.returncode == 0, check.stdout + check.stderr
    actions = shell.data["actions"]
    assert [next(iter(a)) for a in actions] == ["boot", "test"]
    assert actions[0]["boot"] == {
        "method": "minimal",
        "timeout": {"minutes": 1},
        "reset": False,
        "parameters": {"kernel-start-message": ""},  # no wait for the kernel's banner
        "prompts": ["root@"],
    }
    assert actions[1]["test"]["timeout"] == {"minutes": 5}
    assert actions[1]["test"]["docker"] == {"image": "meta-npu-suite", "local": True}
    assert "local" not in job.data["actions"][-1]["test"]["docker"]
    with pytest.raises(LabError, match=r"--set boot_minutes=soon is not a number of minutes"):
        render_job(spec, {**from_device, "boot_minutes": "soon"})
    with pytest.raises(
        LabError, match="needs device_type, suite_image; pass --set device_type=… --set suite_image=…"
    ):
        render_job(spec, {}, shell=True)


FAKE_LAVA_TEST_RAISE = """#!/bin/sh
echo "<LAVA_SIGNAL_TESTRAISE $*>"
exit 1
"""


@pytest.mark.parametrize(
    ("static_info", "suite_exit", "raised"),
    [
        ("root@10.0.0.5:2222", 0, None),
        ("root@10.0.0.5:2222", 1, None),  # a failed check is a test case's fail, not the job's
        ("root@10.0.0.5:2222", 3, "npu-accept-exit-3 board root@10.0.0.5:2222 not examined"),
        ("root@10.0.0.5:2222", 4, "npu-accept-exit-4 board root@10.0.0.5:2222 not examined"),
        ("", 0, "npu-accept: the device dictionary of this device has no static_info npu_target"),
    ],
)
def test_lava_steps_run_as_lava_runs_them(
    static_info: str, suite_exit: int, raised: str | None, tmp_path: Path
) -> None:
    """The rendered steps in `bash -e` (lava-test-runner runs run.sh that way) with LAVA's
    environment file's variable and a stand-in suite exiting 0/1/3/4."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "lava-test-raise").write_text(FAKE_LAVA_TEST_RAISE)
    fake = bindir / "suite"
    fake.write_text(f'#!/bin/sh\necho "suite $*"\nexit {suite_exit}\n')
    for script in bindir.iterdir():
        script.chmod(0o755)
    spec = load_flash_spec(str(board_profile("rock-5b", tmp_path)))
    job = render_job(
        spec,
        {"device_type": "npu-twin", "suite_image": "s", "checkout": str(tmp_path), "python": str(fake)},
        shell=True,
    )
    script = tmp_path / "run.sh"
    script.write_text("\n".join(steps_of(job)) + "\necho steps-done\n")
    env = {"PATH": f"{bindir}:/usr/bin:/bin", "LAVA_STATIC_INFO_0_npu_target": static_info}
    done = subprocess.run(["bash", "-e", str(script)], env=env, capture_output=True, text=True, check=False)
    if raised is None:
        assert done.returncode == 0 and "steps-done" in done.stdout, done.stdout + done.stderr
        assert f"suite -m pytest pytests --target {static_info} --board rock-5b" in done.stdout
    else:
        assert done.returncode == 1 and "steps-done" not in done.stdout
        assert f"<LAVA_SIGNAL_TESTRAISE {raised}" in done.stdout, done.stdout

# SPDX-License-Identifier: MIT
"""LAVA job definitions for a board, rendered from the package's templates/lava/*.yaml.j2 by its flash method.

    python3 -m npu_accept.lab.lava --board imx95-verdin --set image_url=… --set boot_url=… \
        --set device_type=imx95-verdin --set suite_image=…
    python3 -m npu_accept.lab.lava --board imx95-verdin --shell --set device_type=… --set suite_image=…

The board profile's `flash.method` picks the template (uuu -> uuu.yaml.j2, rkdeveloptool and
bmaptool -> flasher.yaml.j2); `--shell` (shell.yaml.j2) is for a device already booted: no
deploy, no reset. The board's address comes from the device (its dictionary's static_info
npu_target); `--set target=…` is optional. A missing variable is one sentence naming it.
The device types LAVA needs for the boards are in templates/lava/device-types.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
import yaml

from npu_accept.flash.errors import FlashError
from npu_accept.flash.spec import FlashSpec, load_flash_spec
from npu_accept.lab.errors import LabError
from npu_accept.paths import lava_templates_dir

TEMPLATE_DIR = lava_templates_dir()
DEVICE_TYPES_DIR = TEMPLATE_DIR / "device-types"
SHELL = "shell"  # the variant for a device already booted
TEMPLATES = {
    "uuu": "uuu.yaml.j2",
    "rkdeveloptool": "flasher.yaml.j2",
    "bmaptool": "flasher.yaml.j2",
    SHELL: "shell.yaml.j2",
}
REQUIRED = {
    "uuu": ("image_url", "boot_url", "device_type", "suite_image"),
    "rkdeveloptool": ("image_url", "loader_url", "device_type", "suite_image"),
    "bmaptool": ("image_url", "device_type", "suite_image"),
    SHELL: ("device_type", "suite_image"),
}
WAITS = ("job_minutes", "action_minutes", "deploy_minutes", "boot_minutes", "test_minutes")


@dataclass(frozen=True)
class RenderedJob:
    board: str
    method: str
    template: str
    text: str

    @property
    def data(self) -> dict[str, Any]:
        data: dict[str, Any] = yaml.safe_load(self.text)  # our templates render a mapping
        return data


def _environment(template_dir: Path) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(template_dir)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        autoescape=False,
    )  # YAML, not HTML: values are quoted with tojson
    env.filters["shquote"] = lambda value: shlex.quote(str(value))
    return env


def render_job(
    spec: FlashSpec, variables: dict[str, str], template_dir: Path = TEMPLATE_DIR, shell: bool = False
) -> RenderedJob:
    """Render the LAVA job of one board; raises LabError naming a missing variable.

    `shell`: the variant for a device already booted (no deploy, no reset)."""
    variant = SHELL if shell else spec.method
    missing = [name for name in REQUIRED[variant] if not variables.get(name)]
    if missing:
        raise LabError(
            f"The LAVA job of {spec.board} needs {', '.join(missing)}; pass "
            + " ".join(f"--set {name}=…" for name in missing)
            + "."
        )
    for name in WAITS:
        if name in variables and not (variables[name].isdigit() and int(variables[name]) > 0):
            raise LabError(
                f"--set {name}={variables[name]} is not a number of minutes; write e.g. --set {name}=5."
            )
    image_url = variables.get("image_url", "")
    context: dict[str, Any] = {
        "board": spec.board,
        "method": spec.method,
        "uuu_script": spec.uuu_script,
        "image_name": image_url.rstrip("/").rsplit("/", 1)[-1] if image_url else "(already booted)",
        **variables,
    }
    template_name = TEMPLATES[variant]
    try:
        text = _environment(template_dir).get_template(template_name).render(context)
    except jinja2.TemplateNotFound as exc:
        raise LabError(
            f"LAVA template {exc.name} is missing from {template_dir}; run from a meta-npu checkout."
        ) from None
    except jinja2.UndefinedError as exc:
        raise LabError(
            f"The LAVA template {template_name} needs a value the command did not give "
            f"({exc.message}); pass it with --set NAME=VALUE."
        ) from None
    try:
        yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise LabError(
            f"The rendered LAVA job of {spec.board} is not valid YAML ({exc}); "
            f"a value passed with --set breaks {template_name}."
        ) from None
    return RenderedJob(spec.board, spec.method, template_name, text)


def _parse_set(items: list[str]) -> dict[str, str]:
    variables = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise LabError(f"--set {item} is not NAME=VALUE; write it as --set image_url=https://….")
        variables[name] = value
    return variables


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python3 -m npu_accept.lab.lava", description="Render the LAVA job definition of a board."
    )
    parser.add_argument("--board", required=True, help="board profile name or YAML path")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="template variable (image_url, boot_url, loader_url, device_type, suite_image, "
        "suite_image_local, target, identity, known_hosts, image_sha256, boot_minutes, …)",
    )
    parser.add_argument(
        "--shell",
        action="store_true",
        help="a device already booted: no deploy, no reset, only the console's prompt and the suite",
    )
    parser.add_argument(
        "--profiles-dir",
        type=Path,
        action="append",
        default=[],
        help="a directory of your own board profiles, searched before the shipped ones (repeatable)",
    )
    args = parser.parse_args(argv)
    try:
        spec = load_flash_spec(args.board, args.profiles_dir)
        job = render_job(spec, _parse_set(args.set), shell=args.shell)
    except (LabError, FlashError) as exc:
        sys.stderr.write(f"lava: {exc}\n")
        return 1
    sys.stdout.write(job.text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

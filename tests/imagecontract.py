# SPDX-License-Identifier: MIT
"""The contract between a board profile and the image its kas entry builds, as the image facts
(scripts/image-facts, schema image-facts/1) describe that image.

Every requirement a profile puts on a board becomes one Requirement; `check` returns None when the
image provides it, else one sentence naming the profile field, the kas entry and what the image
lacks. Memory requirements compile meta-npu's fragment into the board's base tree exactly as the
build does (npu-devicetree.bbclass's include step, cpp, dtc) and read the blob back with fdtget.
"""

from __future__ import annotations

import fnmatch
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import yaml
from boardtrees import CV181X_BOARD_STUBS, IMX95_VERDIN_TREE, RK3576_SOC, RK3588_SOC
from devicetree import DeviceTreeError, apply_dts_include, cells, compile_dts, fdtget, properties, walk

from npu_accept.paths import packaged_profiles_dir

ROOT = Path(__file__).resolve().parents[1]
FACTS_DIR = ROOT / "tests" / "data" / "image-facts"

# ---- what each profile's board is built from, and the family knowledge the contract needs -----

# profile -> kas entries (facts file stems) that build its board.
PROFILE_ENTRIES = {
    "imx95-verdin": ["imx95-verdin-community", "imx95-verdin-scarthgap", "imx95-verdin"],
    "rk3588-evb": ["rk3588-evb"],
    "rk3576-evb": ["rk3576-evb"],
    "rock-5b": ["rock-5b"],
    "milkv-duo256m": ["milkv-duo256m"],
}


@dataclass(frozen=True)
class Driver:
    options: tuple[str, ...] = ()  # kernel options that must be y or m in a fragment reaching the kernel
    module: str = ""  # an out-of-tree module that must be autoloaded by a recipe in the image
    package: str = ""  # the package that installs a driver built as a module


# profile driver.name -> what the image must carry for it (Kconfig symbols of the drivers' trees).
DRIVERS = {
    "neutron": Driver(options=("CONFIG_NEUTRON", "CONFIG_IMX_NEUTRON_REMOTEPROC")),
    "rknpu": Driver(options=("CONFIG_ROCKCHIP_RKNPU",)),
    "rocket": Driver(options=("CONFIG_DRM_ACCEL_ROCKET",), package="kernel-module-rocket"),
    "cv181x_tpu": Driver(module="cv181x_tpu"),
}
# device node -> what creates it (kernel options, or the module).
DEVICES = {
    "/dev/neutron0": Driver(options=("CONFIG_NEUTRON",)),
    "/dev/accel/accel0": Driver(options=("CONFIG_DRM_ACCEL", "CONFIG_DRM_ACCEL_ROCKET")),
    "/dev/cvi-tpu0": Driver(module="cv181x_tpu"),
}
FIRMWARE_DIRS = ("/lib/firmware", "/usr/lib/firmware")
# Vendor recipes that install by glob or from their build directory: what their do_install copies
# and the upstream file that shows the path is among it (docs/PROVENANCE.md, "Layer").
VENDOR_INSTALLS = {
    ("neutron", "/usr/lib/firmware/NeutronFirmware.elf"): (
        "/imx95/firmware/* ",
        "nxp-imx/neutron imx95/firmware/NeutronFirmware.elf (read at 2b12bade)",
    ),
    ("tensorflow-lite-neutron-delegate", "/usr/lib/libneutron_delegate.so"): (
        "/build/lib*.so*",
        "nxp-imx/tflite-neutron-delegate CMakeLists.txt: add_library(neutron_delegate SHARED), at 0d9138b7",
    ),
}
# Programs an init script may start that restart the daemon whenever it exits: the RKNN SDK's
# start_rknn.sh runs rknn_server in a loop (rknpu2/runtime/Linux/rknn_server/*/usr/bin).
RESTARTING_WRAPPERS = {"/usr/bin/start_rknn.sh": "/usr/bin/rknn_server"}
# Board base trees (tests/boardtrees.py) by the DTB the bootloader loads.
BASE_TREES: dict[str, dict[str, str]] = {
    "freescale/imx95-19x19-verdin.dtb": IMX95_VERDIN_TREE,
    "rockchip/rk3588-evb1-lp4-v10-linux.dtb": {
        "rk3588-soc.dtsi": RK3588_SOC,
        "rk3588-evb1-lp4-v10-linux.dts": '/dts-v1/;\n#include "rk3588-soc.dtsi"\n',
    },
    "rockchip/rk3576-evb1-v10-linux.dtb": {
        "rk3576-soc.dtsi": RK3576_SOC,
        "rk3576-evb1-v10-linux.dts": '/dts-v1/;\n#include "rk3576-soc.dtsi"\n',
    },
    "cvitek/sg2002-milkv-duo256m-npu.dtb": CV181X_BOARD_STUBS,
}
# ---- end of the family knowledge ---------------------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    problem: str | None  # what the image lacks, or None when it provides the requirement
    note: str = ""  # how it is provided, when that needs saying (a user opt-in)
    opt_in: str = ""  # the opt-in recipe that provides it once the user supplies the model


@dataclass(frozen=True)
class Requirement:
    profile: str
    entry: str
    field: str  # the profile field, e.g. "delegate.path" or "models[0].inputs"
    check: Callable[[Image, Path], Verdict]

    @property
    def id(self) -> str:
        return f"{self.profile}@{self.entry}:{self.field}"

    def sentence(self, image: Image, problem: str) -> str:
        return f"Profile {self.profile}, field {self.field}: the image of {image.kas} {problem}."


@dataclass
class Image:
    """One kas entry's image as its facts describe it."""

    entry: str
    facts: dict
    kas: str = ""
    derived_from: str = ""
    packages: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        if not self.kas:
            self.kas = ":".join([self.facts["entry"], *self.facts["fragments"]])
        self.packages = package_closure(self.facts)

    def recipe(self, pn: str) -> dict:
        return self.facts["recipes"].get(pn, {"variables": {}, "do_install": "", "layer_files": {}})

    def in_rootfs(self, pn: str) -> bool:
        return pn in self.facts["rootfs_recipes"]


def package_closure(facts: dict) -> set[str]:
    """IMAGE_INSTALL and every package their RDEPENDS reach, through the recipes the facts hold."""
    rdepends: dict[str, list[str]] = {}
    for recipe in facts["recipes"].values():
        for name, value in recipe["variables"].items():
            if name.startswith("RDEPENDS:"):
                rdepends[name.split(":", 1)[1]] = [
                    w for w in value.split() if not w.startswith(("(", ">", "<", "="))
                ]
    seen: set[str] = set()
    todo = list(facts["image_install"])
    while todo:
        pkg = todo.pop()
        if pkg not in seen:
            seen.add(pkg)
            todo += rdepends.get(pkg, [])
    return seen


def load_image(stem: str) -> Image:
    data = json.loads((FACTS_DIR / f"{stem}.json").read_text())
    if data.get("schema") == "image-facts-derived/1":
        base = load_image(Path(data["derived_from"]).stem)
        kas = ":".join([data["entry"], *data["fragments"]]) + f" (derived from {data['derived_from']})"
        return Image(stem, base.facts, kas=kas, derived_from=data["derived_from"])
    return Image(stem, data)


def profiles_dir() -> Path:
    return packaged_profiles_dir()


def load_profile(name: str, directory: Path | None = None) -> dict:
    return yaml.safe_load(((directory or profiles_dir()) / f"{name}.yaml").read_text())


# ---------------------------------------------------------------- what the image installs


@dataclass(frozen=True)
class Provider:
    recipe: str
    package: str
    evidence: str  # "do_install" (names the path) or "FILES" (packages exactly that path)


IMAGE_ROOTS = ("${WORKDIR}/image", "${D}")


def install_lines(do_install: str) -> list[str]:
    """The commands of an expanded do_install, continuation lines joined, without the branches
    BitBake's expansion turned into `if false; then … fi`."""
    lines, skipping = [], 0
    for line in do_install.replace("\\\n", " ").splitlines():
        text = line.strip()
        if skipping:
            skipping += text.startswith("if ") - (text == "fi")
            continue
        if text == "if false; then":
            skipping = 1
            continue
        lines.append(text)
    return lines


def installs(do_install: str, path: str, source: str | None = None) -> bool:
    """True when a command of DO_INSTALL puts PATH into the image: an install/cp/ln/mv whose
    destination is PATH, or the directory of PATH with a source of that name; or the build's own
    `[ -f PATH ] || bbfatal` check after an install it does not spell out (CMake's). With SOURCE,
    only a command copying a file of that name counts."""
    directory, name = path.rsplit("/", 1)
    for line in install_lines(do_install):
        words = line.split()
        if not words:
            continue
        if source is None and words[0] == "[" and "bbfatal" in words and len(words) > 3 and words[1] == "-f":
            target = words[2]
            if any(target == root + path for root in IMAGE_ROOTS):
                return True
            continue
        if words[0] not in ("install", "cp", "ln", "mv") or "-d" in words[1:2]:
            continue
        operands = [w for w in words[1:] if not w.startswith("-") and not w.isdigit()]
        if len(operands) < 2:
            continue
        *sources, dest = operands
        if source is not None and not any(src.rsplit("/", 1)[-1] == source for src in sources):
            continue
        for root in IMAGE_ROOTS:
            if not dest.startswith(root):
                continue
            dest_path = dest[len(root) :]
            if dest_path == path:
                return True
            if dest_path.rstrip("/") == directory and any(src.rsplit("/", 1)[-1] == name for src in sources):
                return True
    return False


def providers(image: Image, path: str) -> list[Provider]:
    """Packages of the image that install PATH, with BitBake's expanded do_install or FILES as proof."""
    found = []
    for pn, recipe in image.facts["recipes"].items():
        if not image.in_rootfs(pn):
            continue
        variables = recipe["variables"]
        for pkg in (variables.get("PACKAGES") or "").split():
            if pkg not in image.packages:
                continue
            files = (variables.get(f"FILES:{pkg}") or "").split()
            if not any(covers(pattern, path) for pattern in files):
                continue
            if installs(recipe["do_install"], path):
                found.append(Provider(pn, pkg, "do_install"))
            elif path in files:
                found.append(Provider(pn, pkg, "FILES"))
            elif path in declared_models(recipe):
                found.append(Provider(pn, pkg, "NPU_MODELS"))
            elif (pn, path) in VENDOR_INSTALLS and VENDOR_INSTALLS[pn, path][0] in recipe["do_install"]:
                found.append(Provider(pn, pkg, "vendor"))
    return found


def declared_models(recipe: dict) -> dict[str, list[str]]:
    """NPU_MODELS of a recipe (npu-model.bbclass, checked by the build): path -> declared inputs."""
    found = {}
    for word in (recipe["variables"].get("NPU_MODELS") or "").split():
        path, _, inputs = word.partition("=")
        found[path] = inputs.split(",") if inputs else []
    return found


def covers(pattern: str, path: str) -> bool:
    return pattern == path or fnmatch.fnmatch(path, pattern) or path.startswith(pattern.rstrip("/") + "/")


def user_model_for(image: Image, path: str) -> str | None:
    """The opt-in recipe (NPU_USER_MODELS) that installs PATH once the user supplies the model."""
    for entry in image.facts["user_models"]:
        pn = entry.split(":", 1)[0]
        if image.recipe(pn)["variables"].get("NPU_USER_MODEL_TARGET") == path:
            return pn
    return None


def kernel_options(image: Image) -> dict[str, str]:
    """Options of meta-npu's fragments that reach the kernel the way its recipe merges them."""
    kernel = image.recipe(image.facts["kernel"])
    variables = kernel["variables"]
    in_src_uri = set(re.findall(r"file://([^;\s]+\.cfg)", variables.get("SRC_URI", "")))
    delta = set((variables.get("DELTA_KERNEL_DEFCONFIG") or "").split())
    merged = in_src_uri if "do_kernel_configme" in kernel["kernel_steps"] else set()
    if "do_merge_delta_config" in kernel["kernel_steps"]:
        merged |= delta
    if image.derived_from:  # meta-imx's linux-imx: copies its defconfig, merges DELTA_KERNEL_DEFCONFIG only
        merged = delta
    options: dict[str, str] = {}
    for name in sorted(merged):
        options.update(kernel["layer_files"].get(name, {}).get("options", {}))
    return options


def driver_problem(image: Image, need: Driver, what: str) -> str | None:
    """None when the image carries NEED (kernel options or an autoloaded module), else what it lacks."""
    if need.options:
        options = kernel_options(image)
        missing = [o for o in need.options if options.get(o) not in ("y", "m")]
        if missing:
            return f"no fragment that reaches {image.facts['kernel']} sets {', '.join(missing)} for {what}"
        if need.package and need.package not in image.packages:
            return f"the driver is a module but the image does not install {need.package}"
        return None
    for pn, recipe in image.facts["recipes"].items():
        if need.module in (recipe["variables"].get("KERNEL_MODULE_AUTOLOAD") or "").split():
            if image.in_rootfs(pn) and any(
                p in image.packages for p in (recipe["variables"].get("PACKAGES") or "").split()
            ):
                return None
    return f"no recipe of the image builds and autoloads the module {need.module} for {what}"


def service_problem(image: Image, daemon: str) -> str | None:
    """None when a package of the image starts DAEMON at boot under a supervisor that restarts it."""
    systemd = image.facts["init_manager"] == "systemd"
    for pn, recipe in image.facts["recipes"].items():
        variables = recipe["variables"]
        if not image.in_rootfs(pn):
            continue
        packages = [p for p in (variables.get("PACKAGES") or "").split() if p in image.packages]
        for local in recipe["layer_files"].values():
            file_name = local["path"].rsplit("/", 1)[-1]
            if systemd and local.get("exec_start") == daemon:
                # Enabled for a package of the image that lists the unit, per package or recipe-wide.
                enabled = any(
                    file_name in (variables.get(f"SYSTEMD_SERVICE:{pkg}") or "").split()
                    and variables.get(
                        f"SYSTEMD_AUTO_ENABLE:{pkg}", variables.get("SYSTEMD_AUTO_ENABLE", "enable")
                    )
                    == "enable"
                    for pkg in packages
                )
                if enabled and local.get("restart") in ("on-failure", "always"):
                    return None
                return f"{local['path']} starts {daemon} but is not enabled with Restart=on-failure or always"
            wrappers = [w for w in local.get("starts", []) if RESTARTING_WRAPPERS.get(w) == daemon]
            if systemd or not wrappers:
                continue
            # The script that starts the wrapper is the one update-rc.d registers (INITSCRIPT_NAME).
            names = {
                variables.get(f"INITSCRIPT_NAME:{pkg}") or variables.get("INITSCRIPT_NAME")
                for pkg in packages
            }
            if any(
                name and installs(recipe["do_install"], f"/etc/init.d/{name}", file_name) for name in names
            ):
                return None
    kind = "systemd unit" if systemd else "init script"
    return f"no package of the image has an enabled {kind} that starts {daemon} and restarts it when it exits"


# ---------------------------------------------------------------- memory: the DTB the bootloader loads


def compile_boot_dtb(image: Image, workdir: Path) -> Path:
    """The bootloader's default DTB, built from the board's base tree as the kernel recipe builds it."""
    variables = image.recipe(image.facts["kernel"])["variables"]
    boot = (variables.get("NPU_BOOT_DTB") or "").split()
    if not boot or boot[0] not in BASE_TREES:
        raise DeviceTreeError(f"NPU_BOOT_DTB is {boot or 'unset'}, a tree this contract has no base for")
    dtb = boot[0]
    arch = "riscv" if dtb.startswith("cvitek/") else "arm64"
    tree = workdir / "linux"
    dts_dir = tree / "arch" / arch / "boot" / "dts" / Path(dtb).parent
    unpack = workdir / "sources"
    unpack.mkdir(parents=True)
    for name, text in BASE_TREES[dtb].items():
        (dts_dir / name).parent.mkdir(parents=True, exist_ok=True)
        (dts_dir / name).write_text(text)
    for name, local in image.recipe(image.facts["kernel"])["layer_files"].items():
        source = ROOT / local["path"]
        (unpack / name).write_bytes(source.read_bytes())
        if source.suffix in (".dts", ".dtsi"):
            (dts_dir / name).write_bytes(source.read_bytes())  # as the recipe's do_configure copies them
    fragment = variables.get("NPU_DTS_FRAGMENT") or ""
    if fragment:
        step = apply_dts_include(tree, unpack, fragment, dtb, arch)
        if step.returncode:
            raise DeviceTreeError(step.stderr.strip())
    return compile_dts(dts_dir / Path(dtb).with_suffix(".dts").name, workdir / "boot.dtb")


def node_by_compatible(dtb: Path, compatibles: tuple[str, ...]) -> str | None:
    """The first node whose compatible list holds one of COMPATIBLES."""
    for node in walk(dtb):
        if "compatible" in properties(dtb, node) and set(compatibles) & set(
            fdtget(dtb, "-t", "s", node, "compatible").split()
        ):
            return node
    return None


def node_by_phandle(dtb: Path, phandle: int) -> str | None:
    for node in walk(dtb):
        if "phandle" in properties(dtb, node) and cells(dtb, node, "phandle")[0] == phandle:
            return node
    return None


def region_size(dtb: Path, node: str) -> int:
    """A reserved-memory node's "size" (2 cells), or an SRAM child's reg size (1 cell)."""
    if "size" in properties(dtb, node):
        hi, lo = cells(dtb, node, "size")
        return hi << 32 | lo
    return cells(dtb, node, "reg")[-1]


# profile memory key -> (compatibles of the NPU's consumer node, its property naming the region).
# SRAM: the region the NPU node itself points at, never another SRAM user's (the video decoders
# have rockchip,sram too).
MEMORY = {
    "pool_min_bytes": (("fsl,imx95-neutron",), "memory-region"),
    "sram_bytes": (("rockchip,rk3588-rknpu", "rockchip,rk3576-rknpu"), "rockchip,sram"),
    "ion_min_bytes": (("cvitek,carveout",), "memory-region"),
}


def memory_region(dtb: Path, key: str) -> tuple[str, int] | None:
    """(node, size) of the region the NPU's consumer node points at in the compiled DTB."""
    compatibles, prop = MEMORY[key]
    consumer = node_by_compatible(dtb, compatibles)
    if consumer and prop in properties(dtb, consumer):
        target = node_by_phandle(dtb, cells(dtb, consumer, prop)[0])
        if target:
            return target, region_size(dtb, target)
    return None


# ---------------------------------------------------------------- requirements of a profile


def path_verdict(image: Image, paths: list[str], what: str) -> Verdict:
    for path in paths:
        if providers(image, path):
            return Verdict(None)
    return Verdict(f"has no package that installs {what} ({' or '.join(paths)})")


def model_path_verdict(image: Image, path: str) -> Verdict:
    if providers(image, path):
        return Verdict(None)
    opt_in = user_model_for(image, path)
    if opt_in:
        hint = image.recipe(opt_in)["variables"].get("NPU_USER_MODEL_HINT", "")
        return Verdict(None, f"through the user opt-in {opt_in} (sha256-verified): {hint}", opt_in)
    return Verdict(f"has no recipe that installs the model {path}, and no user opt-in for it")


def profile_inputs(model: dict, directory: Path) -> list[str]:
    """The inputs a profile feeds MODEL, as "dtype:d0xd1...": random specs, or .npy files' headers."""
    found = []
    for spec in model["inputs"]:
        if "random" in spec:
            dtype, shape = spec["random"]["dtype"], spec["random"]["shape"]
        else:
            array = np.load(directory / spec["file"], mmap_mode="r", allow_pickle=False)
            dtype, shape = array.dtype.name, array.shape
        found.append(f"{dtype}:{'x'.join(str(d) for d in shape)}")
    return found


def model_inputs_verdict(image: Image, model: dict, directory: Path) -> Verdict:
    wanted = profile_inputs(model, directory)
    found = providers(image, model["path"])
    pn = found[0].recipe if found else user_model_for(image, model["path"])
    declared = declared_models(image.recipe(pn)).get(model["path"], []) if pn else []
    if not declared:
        return Verdict(f"declares no input for {model['path']} (NPU_MODELS of {pn or 'no recipe'})")
    if wanted != declared:
        return Verdict(f"installs {model['path']} taking {','.join(declared)}, not {','.join(wanted)}")
    return Verdict(None)


def memory_verdict(image: Image, workdir: Path, key: str, minimum: int) -> Verdict:
    try:
        dtb = compile_boot_dtb(image, workdir)
        found = memory_region(dtb, key)
    except DeviceTreeError as error:
        return Verdict(f"does not compile its boot device tree ({error})")
    if found is None:
        return Verdict(f"boots a device tree whose NPU has no {MEMORY[key][1]} region")
    node, size = found
    if size < minimum:
        return Verdict(f"boots a device tree whose {node} holds {size} bytes, fewer than {minimum}")
    return Verdict(None)


def driver_requirements(name: str, profile: dict, entry: str) -> list[Requirement]:
    driver = profile.get("driver") or {}
    out = []
    if driver:
        need = DRIVERS.get(driver["name"], Driver(options=("unknown",)))
        out.append(
            Requirement(
                name, entry, "driver.name", lambda i, _w: Verdict(driver_problem(i, need, driver["name"]))
            )
        )
    for dev in driver.get("devices", []):
        creator = DEVICES.get(dev, Driver(options=("unknown",)))
        out.append(
            Requirement(
                name,
                entry,
                f"driver.devices[{dev}]",
                lambda i, _w, c=creator, d=dev: Verdict(driver_problem(i, c, d)),
            )
        )
    if driver.get("firmware"):
        paths = [f"{d}/{driver['firmware']}" for d in FIRMWARE_DIRS]
        out.append(
            Requirement(name, entry, "driver.firmware", lambda i, _w: path_verdict(i, paths, "the firmware"))
        )
    return out


def stack_requirements(name: str, profile: dict, entry: str) -> list[Requirement]:
    out = []
    for key in ("delegate", "runtime", "daemon"):
        part = profile.get(key) or {}
        if part.get("path"):
            path = part["path"]
            out.append(
                Requirement(
                    name, entry, f"{key}.path", lambda i, _w, p=path, k=key: path_verdict(i, [p], f"the {k}")
                )
            )
    daemon = profile.get("daemon") or {}
    if daemon.get("restart_check"):
        out.append(
            Requirement(
                name, entry, "daemon.restart_check", lambda i, _w: Verdict(service_problem(i, daemon["path"]))
            )
        )
    for key, minimum in (profile.get("memory") or {}).items():
        if key in MEMORY:
            out.append(
                Requirement(
                    name, entry, f"memory.{key}", lambda i, w, k=key, m=minimum: memory_verdict(i, w, k, m)
                )
            )
    return out


def model_requirements(name: str, profile: dict, entry: str, directory: Path) -> list[Requirement]:
    out = []
    for index, model in enumerate(profile.get("models", [])):
        out.append(
            Requirement(
                name, entry, f"models[{index}].path", lambda i, _w, m=model: model_path_verdict(i, m["path"])
            )
        )
        if model.get("reference"):
            ref = model["reference"]
            out.append(
                Requirement(
                    name, entry, f"models[{index}].reference", lambda i, _w, r=ref: model_path_verdict(i, r)
                )
            )
        out.append(
            Requirement(
                name,
                entry,
                f"models[{index}].inputs",
                lambda i, _w, m=model: model_inputs_verdict(i, m, directory),
            )
        )
    return out


def requirements(name: str, profile: dict, entry: str, directory: Path | None = None) -> list[Requirement]:
    """Every requirement PROFILE (read from DIRECTORY) puts on a board, against the image of ENTRY."""
    return [
        *driver_requirements(name, profile, entry),
        *stack_requirements(name, profile, entry),
        *model_requirements(name, profile, entry, directory or profiles_dir()),
    ]


def all_requirements(directory: Path | None = None) -> list[Requirement]:
    found = []
    for name, entries in PROFILE_ENTRIES.items():
        profile = load_profile(name, directory)
        for entry in entries:
            found += requirements(name, profile, entry, directory)
    return found


# ---------------------------------------------------------------- the README's "image ⇄ suite" cell


def tally_cell(entry: str, directory: Path | None = None) -> str:
    """ "N/M" requirements the image of ENTRY provides, what is missing, and what needs an opt-in."""
    import tempfile

    image = load_image(entry)
    provided, missing, opt_ins = 0, [], set()
    reqs = [r for r in all_requirements(directory) if r.entry == entry]
    with tempfile.TemporaryDirectory() as tmp:
        for index, requirement in enumerate(reqs):
            verdict = requirement.check(image, Path(tmp) / str(index))
            if verdict.problem:
                missing.append(requirement.field)
            else:
                provided += 1
            if verdict.opt_in:
                opt_ins.add(verdict.opt_in)
    cell = f"{provided}/{len(reqs)}"
    if missing:
        cell += f"; missing: {', '.join(missing)}"
    if opt_ins:
        cell += f"; models through the user opt-in {', '.join(sorted(opt_ins))}"
    if image.derived_from:
        cell += f"; derived from {image.derived_from}'s facts (not parseable here)"
    return cell


if __name__ == "__main__":
    for stems in PROFILE_ENTRIES.values():
        for stem in stems:
            print(f"kas/{stem}.yml: {tally_cell(stem)}")

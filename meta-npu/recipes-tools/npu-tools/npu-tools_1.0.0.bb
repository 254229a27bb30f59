# nooelint: oelint.var.mandatoryvar.HOMEPAGE
# The tools are part of this layer (files/); there is no separate project or home page.
# SPDX-License-Identifier: MIT
SUMMARY = "On-target NPU tools npu-info and npu-run of the meta-npu acceptance suite"
DESCRIPTION = "npu-info reports what the board's NPU stack is (driver, firmware, runtime, \
delegate, memory pools, build manifest) as JSON; npu-run runs a model on a chosen backend \
(TFLite CPU, TFLite delegate, RKNN, CVI) and reports outputs, delegation and latency as JSON."
LICENSE = "MIT"
# nooelint: oelint.var.licenseremotefile
LIC_FILES_CHKSUM = "file://${COMMON_LICENSE_DIR}/MIT;md5=0835ade698e0bcf8506ecda2f7b4f302"

SRC_URI = " \
    file://npu-info \
    file://npu-run \
    file://npu_target \
"

S = "${UNPACKDIR}"

inherit npu-family

# The Python binding each family's backends import differs, so the package is per machine.
PACKAGE_ARCH = "${MACHINE_ARCH}"

do_configure[noexec] = "1"
do_compile[noexec] = "1"

do_install() {
    install -d ${D}${bindir} ${D}${datadir}/npu-tools
    install -m 0755 ${S}/npu-info ${S}/npu-run ${D}${bindir}/
    cp -R --no-preserve=ownership ${S}/npu_target ${D}${datadir}/npu-tools/
    find ${D}${datadir}/npu-tools -name __pycache__ -prune -exec rm -rf {} +
}

# Standard-library modules the tools import, in the packages of oe-core's python3 manifest
# (walnascar meta/recipes-devtools/python/python3/python3-manifest.json): json -> python3-json,
# hashlib -> python3-crypt, tempfile -> python3-io, ctypes (backends/rknn.py, which every
# machine gets as part of npu_target) -> python3-ctypes, the rest -> python3-core.
NPU_TOOLS_PYTHON_RDEPENDS = " \
    python3-core \
    python3-crypt \
    python3-ctypes \
    python3-io \
    python3-json \
    python3-numpy \
"
# The package with the Python bindings the family's backend imports; set per family by a
# bbappend in the vendor's dynamic layer (dynamic-layers/<collection>/recipes-tools/npu-tools/).
NPU_TOOLS_BINDINGS ?= ""

RDEPENDS:${PN} = "${NPU_TOOLS_BINDINGS} ${NPU_TOOLS_PYTHON_RDEPENDS}"
# npu-info falls back to `modinfo -F version <driver>` (kmod, oe-core walnascar kmod_34.1.bb
# ALTERNATIVE:kmod) when /sys/module/<driver>/version is absent; `dmesg` comes with busybox.
RRECOMMENDS:${PN} = "kmod"

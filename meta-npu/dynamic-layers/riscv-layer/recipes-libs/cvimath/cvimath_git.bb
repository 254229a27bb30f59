# SPDX-License-Identifier: MIT
SUMMARY = "Sophgo CV18xx TPU math helpers (libcvimath)"
DESCRIPTION = "TPU-accelerated math primitives built on cvikernel and cviruntime, with their \
samples."
HOMEPAGE = "https://github.com/sophgo/cvimath"
# sophgo/cvimath has no licence file and no licence notice in its sources: nothing grants a
# licence, so the recipe declares oe-core's Proprietary and makes the user opt in with
# LICENSE_FLAGS_ACCEPTED += "sophgo-no-licence".
LICENSE = "Proprietary"
# nooelint: oelint.var.licenseremotefile - no licence text exists upstream, see above
LIC_FILES_CHKSUM = "file://${COMMON_LICENSE_DIR}/Proprietary;md5=0557f9d92cf58f2ccdd50f62f8ac0b28"
LICENSE_FLAGS = "sophgo-no-licence"

DEPENDS = "cvikernel cviruntime"

PV = "0.0+git"

# sophgo/cvimath branch sg200x-dev (same commit as master), read from the repository.
SRC_URI = "git://github.com/sophgo/cvimath.git;protocol=https;branch=sg200x-dev;destsuffix=${BP}"
SRCREV = "ce8705f49da5e5f59c2ddb3253ef88323a0cd9c4"

S = "${UNPACKDIR}/${BP}"

inherit cmake

# TPU_SDK_ROOT is where CMakeLists.txt looks for cvikernel/cviruntime headers and libraries.
EXTRA_OECMAKE = "-DTPU_SDK_ROOT=${STAGING_DIR_HOST}${prefix} -DCMAKE_BUILD_TYPE=Release"

PACKAGE_ARCH = "${MACHINE_ARCH}"
COMPATIBLE_MACHINE = "^milkv-(duo|duo256m|duos)$"

do_install:append() {
    # CMakeLists.txt installs an aarch64 toolchain file as a "sample"; it is no use on target.
    rm -rf ${D}${prefix}/samples
}

# libcvimath.so is unversioned: it belongs in the main package.
SOLIBS = ".so"
FILES_SOLIBSDEV = ""

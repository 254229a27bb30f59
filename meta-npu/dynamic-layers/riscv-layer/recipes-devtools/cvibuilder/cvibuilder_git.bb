# SPDX-License-Identifier: MIT
SUMMARY = "cvimodel flatbuffers schema of the CV18xx TPU runtime as C++ headers"
DESCRIPTION = "proto/cvimodel.fbs and proto/parameter.fbs compiled by flatc into \
cvibuilder/cvimodel_generated.h and parameter_generated.h, which cviruntime includes to read \
.cvimodel files. Header-only: everything lands in the -dev package."
HOMEPAGE = "https://github.com/sophgo/cvibuilder"
# sophgo/cvibuilder has no licence file and its files (CMakeLists.txt, two .fbs, README.md,
# .gitignore) carry no copyright or licence notice, so nothing grants a licence: treat as proprietary and make the
# user opt in (LICENSE_FLAGS_ACCEPTED += "sophgo-no-licence"). Proprietary is oe-core's
# common-licenses/Proprietary.
LICENSE = "Proprietary"
# nooelint: oelint.var.licenseremotefile - no licence text exists upstream, see above
LIC_FILES_CHKSUM = "file://${COMMON_LICENSE_DIR}/Proprietary;md5=0557f9d92cf58f2ccdd50f62f8ac0b28"
LICENSE_FLAGS = "sophgo-no-licence"

DEPENDS = "flatbuffers-native"

PV = "0.0+git"

# sophgo/cvibuilder branch sg200x-dev (same commit as master), read from the repository.
SRC_URI = "git://github.com/sophgo/cvibuilder.git;protocol=https;branch=sg200x-dev;destsuffix=${BP}"
SRCREV = "4309f2a649fc7cfe7160389d52a81c469dbdd7bc"

S = "${UNPACKDIR}/${BP}"

inherit cmake

# CMakeLists.txt runs ${FLATBUFFERS_PATH}/bin/flatc: the native flatc.
EXTRA_OECMAKE = "-DFLATBUFFERS_PATH=${STAGING_DIR_NATIVE}${prefix_native}"

ALLOW_EMPTY:${PN} = "1"

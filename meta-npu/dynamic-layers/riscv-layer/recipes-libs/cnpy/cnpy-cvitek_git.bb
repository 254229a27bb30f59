# SPDX-License-Identifier: MIT
SUMMARY = "cnpy: read and write NumPy .npy/.npz files from C++ (Sophgo's TPU branch)"
DESCRIPTION = "Carl Rogers' cnpy as Sophgo ships it for the CV18xx TPU SDK; model_runner \
reads inputs and references and writes outputs as .npz through it."
HOMEPAGE = "https://github.com/sophgo/cnpy"
LICENSE = "MIT"
LIC_FILES_CHKSUM = "file://LICENSE;md5=689f10b06d1ca2d4b1057e67b16cd580"

DEPENDS = "zlib"

PV = "0.0+git"

# sophgo/cnpy branch tpu ("[feat] cnpy opensource for cv18xx soc."), read from the repository;
# master is the unmodified 2018 upstream.
SRC_URI = "git://github.com/sophgo/cnpy.git;protocol=https;branch=tpu;destsuffix=${BP}"
SRCREV = "2f56f4c23ea840f9d15c43801368cf4a089efa84"

S = "${UNPACKDIR}/${BP}"

inherit cmake

EXTRA_OECMAKE = "-DENABLE_STATIC=OFF"

# mat2npz, npy2mat and npz2mat are host-side helpers (`#!/usr/bin/env python`, importing numpy
# and scipy.io, read at 2f56f4c2): not for the target, as in buildroot/package/cvi-cnpy.
do_install:append() {
    rm -f ${D}${bindir}/mat2npz ${D}${bindir}/npy2mat ${D}${bindir}/npz2mat
    rmdir --ignore-fail-on-non-empty ${D}${bindir}
}

# libcnpy.so is unversioned: it belongs in the main package.
SOLIBS = ".so"
FILES_SOLIBSDEV = ""

# SPDX-License-Identifier: MIT
SUMMARY = "Sophgo CV18xx TPU runtime (libcviruntime) with model_runner and cvimodel_tool"
DESCRIPTION = "Loads .cvimodel files, allocates their weights, command buffers and tensors \
from the ION carveout and runs them on /dev/cvi-tpu0 (CVI_NN_* API). Built with RUNTIME=SOC \
for one chip family; a cvimodel built for another chip is refused at load \
(\"cvimodel built for X CANNOT run on platform Y\"). The -tools package holds model_runner (runs a \
model on .npz inputs and compares with a reference .npz), cvimodel_tool (dumps a model's \
sections and memory needs) and the stress/multi-model testers."

DEPENDS = "cnpy-cvitek cvibuilder cvikernel flatbuffers zlib"

require cviruntime.inc

inherit cmake

# CMakeLists.txt reads every dependency from a prefix: all of them are in the target sysroot.
EXTRA_OECMAKE = " \
    -DCHIP=${CVI_CHIP} \
    -DRUNTIME=SOC \
    -DCVIKERNEL_PATH=${STAGING_DIR_HOST}${prefix} \
    -DCNPY_PATH=${STAGING_DIR_HOST}${prefix} \
    -DFLATBUFFERS_PATH=${STAGING_DIR_HOST}${prefix} \
    -DCVIBUILDER_PATH=${STAGING_DIR_HOST}${prefix} \
    -DENABLE_TEST=OFF \
    -DENABLE_PYRUNTIME=OFF \
"

do_install:append() {
    # Vendor SDK helpers installed at the prefix root (envs_tpu_sdk.sh, regression_*.sh)
    # assume the SDK tarball layout, not /usr: leave them out of the image.
    rm -f ${D}${prefix}/*.sh
    # The library the acceptance profile and npu-run's cvi backend load.
    [ -f ${D}${libdir}/libcviruntime.so ] || bbfatal "CMake installed no ${libdir}/libcviruntime.so: the runtime's install rules changed."
}

# libcviruntime.so is unversioned (no SONAME version): it is the runtime, not a dev symlink.
SOLIBS = ".so"
FILES_SOLIBSDEV = ""

PACKAGES =+ "${PN}-tools"
FILES:${PN}-tools += "${bindir}"
RDEPENDS:${PN}-tools = "${PN}"
RRECOMMENDS:${PN} = "cvitek-tpu"

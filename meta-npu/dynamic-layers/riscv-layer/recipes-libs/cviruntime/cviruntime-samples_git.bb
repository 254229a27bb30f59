# SPDX-License-Identifier: MIT
SUMMARY = "Sophgo CV18xx TPU runtime samples: classifiers, model runner, detectors"
DESCRIPTION = "The samples/ tree of cviruntime built against the installed runtime: \
cvi_sample_classifier (+ _bf16, _fused_preprocess, _multi_batch), cvi_sample_model_runner, \
cvi_sample_model_info and the samples_extra detectors, with their run scripts. The .cvimodel \
files they run are not in the repository: they come from TPU-MLIR (see the layer README)."

DEPENDS = "cnpy-cvitek cvikernel cviruntime opencv zlib"

require cviruntime.inc

inherit cmake

OECMAKE_SOURCEPATH = "${S}/samples"
EXTRA_OECMAKE = " \
    -DTPU_SDK_PATH=${STAGING_DIR_HOST}${prefix} \
    -DCNPY_PATH=${STAGING_DIR_HOST}${prefix} \
    -DOPENCV_PATH=${STAGING_DIR_HOST}${prefix} \
"

# samples/CMakeLists.txt installs scripts and data relative to the prefix; keep them together
# under ${datadir}/${BPN}.
EXTRA_OECMAKE += "-DCMAKE_INSTALL_PREFIX=${datadir}/${BPN}"

do_install:append() {
    install -d ${D}${bindir}
    for exe in ${D}${datadir}/${BPN}/bin/*; do
        mv "$exe" ${D}${bindir}/
    done
    rmdir ${D}${datadir}/${BPN}/bin
}

FILES:${PN} += "${datadir}/${BPN}"
RDEPENDS:${PN} = "cviruntime"

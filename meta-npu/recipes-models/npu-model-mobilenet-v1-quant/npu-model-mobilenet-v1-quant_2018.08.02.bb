# SPDX-License-Identifier: MIT
SUMMARY = "MobileNet v1 1.0 224 quantized (uint8) TFLite model for the NPU acceptance suite"
DESCRIPTION = "TensorFlow's hosted mobilenet_v1_1.0_224_quant.tflite (release 2018_08_02), installed \
as /usr/share/npu-models/mobilenet_v1_1.0_224_quant.tflite. The ROCK 5B profile runs it through \
Mesa's Teflon delegate on the NPU and on the CPU, and compares the two."
HOMEPAGE = "https://www.tensorflow.org/lite/guide/hosted_models"
LICENSE = "Apache-2.0"
# The tarball carries no licence file and no licence statement for this 2018_08_02 release was
# found: Apache-2.0 is the licence of tensorflow/models, whose research/slim/nets/mobilenet_v1.md
# publishes the MobileNet v1 quantized checkpoints (release 2018_02_22); this release is taken to
# be under the same terms.
# nooelint: oelint.var.licenseremotefile - no licence file in the tarball, see above
LIC_FILES_CHKSUM = "file://${COMMON_LICENSE_DIR}/Apache-2.0;md5=89aea4e17d99a7cacdbeed46a0096b10"

# The same download, with this sha256, is pinned by NXP's tensorflow-lite recipes (meta-imx) and
# others; it was not downloaded here (no network), so the fetch itself is what confirms it.
SRC_URI = "https://storage.googleapis.com/download.tensorflow.org/models/mobilenet_v1_2018_08_02/mobilenet_v1_1.0_224_quant.tgz;subdir=mobilenet;downloadfilename=mobilenet_v1_1.0_224_quant-${PV}.tgz"
SRC_URI[sha256sum] = "d32432d28673a936b2d6281ab0600c71cf7226dfe4cdcef3012555f691744166"

S = "${UNPACKDIR}/mobilenet"

inherit allarch npu-model

NPU_MODELS = "${datadir}/npu-models/mobilenet_v1_1.0_224_quant.tflite=uint8:1x224x224x3"

do_configure[noexec] = "1"
do_compile[noexec] = "1"

do_install() {
    install -d ${D}${datadir}/npu-models
    install -m 0644 ${S}/mobilenet_v1_1.0_224_quant.tflite ${D}${datadir}/npu-models/
}

FILES:${PN} += "${datadir}/npu-models"

# SPDX-License-Identifier: MIT
SUMMARY = "The user's Neutron-converted TFLite model for the i.MX95 acceptance suite"
DESCRIPTION = "Installs a model converted by NXP's neutron-converter as \
/usr/share/npu-models/mobilenet_v1_1.0_224_quant_neutron.tflite, the model the imx95-verdin \
acceptance profile runs through libneutron_delegate.so and compares with the unconverted model \
that tensorflow-lite's examples ship, run on the CPU."
HOMEPAGE = "https://github.com/nxp-imx/tflite-neutron-delegate"
# The converted model is derived from TensorFlow's hosted MobileNet v1 (Apache-2.0), which has no
# licence file of its own.
LICENSE = "Apache-2.0"
# nooelint: oelint.var.licenseremotefile - the model file carries no licence text, see above
LIC_FILES_CHKSUM = "file://${COMMON_LICENSE_DIR}/Apache-2.0;md5=89aea4e17d99a7cacdbeed46a0096b10"

# neutron-converter (NXP's eIQ Neutron SDK) is proprietary host software that no layer fetches,
# so no recipe can convert at build time. The user converts once, with the SDK of the BSP release
# (seed 000 used NeutronSDK_2.2.2+LF_6.12.49_2.2.0):
#   neutron-converter --input mobilenet_v1_1.0_224_quant.tflite --target imx95 \
#       --output mobilenet_v1_1.0_224_quant_neutron.tflite
# and points the build at the result, in local.conf:
#   NPU_NEUTRON_MODEL = "/abs/path/mobilenet_v1_1.0_224_quant_neutron.tflite"
#   NPU_NEUTRON_MODEL_SHA256 = "<sha256sum of that file>"
NPU_NEUTRON_MODEL ?= ""
NPU_NEUTRON_MODEL_SHA256 ?= ""

SRC_URI = "file://${NPU_NEUTRON_MODEL}"

S = "${UNPACKDIR}"

inherit allarch

# nooelint: oelint.task.noanonpython - skip, with the fix, while the user has supplied no model
python () {
    if not d.getVar('NPU_NEUTRON_MODEL'):
        raise bb.parse.SkipRecipe('NPU_NEUTRON_MODEL is not set: convert the model with neutron-converter --target imx95 and set NPU_NEUTRON_MODEL and NPU_NEUTRON_MODEL_SHA256 in local.conf (see this recipe).')
}

do_configure[noexec] = "1"
do_compile[noexec] = "1"

python do_verify_model() {
    import hashlib
    path = d.getVar('NPU_NEUTRON_MODEL')
    expected = (d.getVar('NPU_NEUTRON_MODEL_SHA256') or '').strip().lower()
    with open(path, 'rb') as model:
        actual = hashlib.sha256(model.read()).hexdigest()
    if expected != actual:
        bb.fatal('%s has sha256 %s, but NPU_NEUTRON_MODEL_SHA256 is "%s": set NPU_NEUTRON_MODEL_SHA256 to the sha256sum of the converted model you mean to ship.' % (path, actual, expected))
}
addtask verify_model after do_unpack before do_install
do_verify_model[vardeps] += "NPU_NEUTRON_MODEL NPU_NEUTRON_MODEL_SHA256"

do_install() {
    install -d ${D}${datadir}/npu-models
    install -m 0644 ${NPU_NEUTRON_MODEL} ${D}${datadir}/npu-models/mobilenet_v1_1.0_224_quant_neutron.tflite
}

FILES:${PN} += "${datadir}/npu-models"

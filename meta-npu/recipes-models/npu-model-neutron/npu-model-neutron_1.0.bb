# SPDX-License-Identifier: MIT
SUMMARY = "The user's Neutron-converted TFLite model for the i.MX95 acceptance suite"
DESCRIPTION = "Installs a model converted by NXP's neutron-converter as \
/usr/share/npu-models/mobilenet_v1_1.0_224_quant_neutron.tflite, the model the imx95-verdin \
acceptance profile runs through libneutron_delegate.so and compares with the unconverted model \
that tensorflow-lite's examples ship, run on the CPU."
HOMEPAGE = "https://github.com/nxp-imx/tflite-neutron-delegate"
# Derived from TensorFlow's hosted MobileNet v1 (Apache-2.0), which has no licence file of its own.
LICENSE = "Apache-2.0"
# nooelint: oelint.var.licenseremotefile - the model file carries no licence text, see above
LIC_FILES_CHKSUM = "file://${COMMON_LICENSE_DIR}/Apache-2.0;md5=89aea4e17d99a7cacdbeed46a0096b10"

# neutron-converter (NXP's eIQ Neutron SDK) is proprietary host software: the user converts once,
#   neutron-converter --input mobilenet_v1_1.0_224_quant.tflite --target imx95 \
#       --output mobilenet_v1_1.0_224_quant_neutron.tflite
# and sets NPU_NEUTRON_MODEL (absolute path) and NPU_NEUTRON_MODEL_SHA256 in local.conf.
NPU_NEUTRON_MODEL ?= ""
NPU_NEUTRON_MODEL_SHA256 ?= ""

NPU_USER_MODEL = "${NPU_NEUTRON_MODEL}"
NPU_USER_MODEL_SHA256 = "${NPU_NEUTRON_MODEL_SHA256}"
NPU_USER_MODEL_TARGET = "${datadir}/npu-models/mobilenet_v1_1.0_224_quant_neutron.tflite"
NPU_USER_MODEL_HINT = "NPU_NEUTRON_MODEL is not set: convert the model with neutron-converter --target imx95 and set NPU_NEUTRON_MODEL and NPU_NEUTRON_MODEL_SHA256 in local.conf (see this recipe)."
# What the converted model takes: the input of the MobileNet it was converted from.
NPU_USER_MODEL_INPUTS = "uint8:1x224x224x3"

inherit npu-user-model

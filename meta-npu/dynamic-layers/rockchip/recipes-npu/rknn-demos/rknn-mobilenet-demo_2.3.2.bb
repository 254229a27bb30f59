# SPDX-License-Identifier: MIT
SUMMARY = "RKNPU2 MobileNet v1 image classification demo"
DESCRIPTION = "rknn_mobilenet_demo from rknn-toolkit2: classifies an image with the SoC's \
mobilenet_v1.rknn and prints the top-5 classes. Run as \
rknn_mobilenet_demo /usr/share/rknn_mobilenet_demo/model/<SOC>/mobilenet_v1.rknn \
/usr/share/rknn_mobilenet_demo/model/dog_224x224.jpg"

RKNN_DEMO = "rknn_mobilenet_demo"
# The demo's documented input is a 224x224 RGB image (model/dog_224x224.jpg), fed as uint8 NHWC.
NPU_MODELS = "${datadir}/${RKNN_DEMO}/model/${RKNN_TARGET_SOC}/mobilenet_v1.rknn=uint8:1x224x224x3"

require rknn-demo.inc

DEPENDS += "librknnrt opencv"

SRC_URI += "file://0001-rknn_mobilenet_demo-build-against-system-libraries-and-honour-the-install-prefix.patch"

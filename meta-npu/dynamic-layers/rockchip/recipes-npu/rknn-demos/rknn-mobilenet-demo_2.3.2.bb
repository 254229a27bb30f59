# SPDX-License-Identifier: MIT
SUMMARY = "RKNPU2 MobileNet v1 image classification demo"
DESCRIPTION = "rknn_mobilenet_demo from rknn-toolkit2: classifies an image with the SoC's \
mobilenet_v1.rknn and prints the top-5 classes. Run as \
rknn_mobilenet_demo /usr/share/rknn_mobilenet_demo/model/<SOC>/mobilenet_v1.rknn \
/usr/share/rknn_mobilenet_demo/model/dog_224x224.jpg"

RKNN_DEMO = "rknn_mobilenet_demo"

require rknn-demo.inc

DEPENDS += "librknnrt opencv"

SRC_URI += "file://0001-rknn_mobilenet_demo-build-against-system-libraries-and-honour-the-install-prefix.patch"

# SPDX-License-Identifier: MIT
SUMMARY = "RKNPU2 YOLOv5s object detection demo"
DESCRIPTION = "rknn_yolov5_demo from rknn-toolkit2: detects objects with the SoC's \
yolov5s-640-640.rknn, pre-processing with RGA. Run as \
rknn_yolov5_demo /usr/share/rknn_yolov5_demo/model/<SOC>/yolov5s-640-640.rknn \
/usr/share/rknn_yolov5_demo/model/bus.jpg"

RKNN_DEMO = "rknn_yolov5_demo"

require rknn-demo.inc

# rockchip-librga: JeffyCN/meta-rockchip recipes-graphics/rockchip-librga (librga, im2d.h).
DEPENDS += "librknnrt opencv rockchip-librga"

SRC_URI += "file://0001-rknn_yolov5_demo-build-against-system-libraries-and-honour-the-install-prefix.patch"

# SPDX-License-Identifier: MIT
# The Rockchip families of packagegroup-npu (NPU_FAMILY, set by the kas board files).
#
# rknpu (vendor stack): the RKNPU driver is built into linux-rockchip (rknpu.cfg), so it has no
# package; librknnrt and rknn_server come from airockchip/rknn-toolkit2 v2.3.2, the demos carry
# the SDK's own .rknn models. RKNN-Toolkit-Lite2 is not listed: its
# wheels stop at CPython 3.12 (see rknn-toolkit-lite2_2.3.2.bb).
# The acceptance suite's CPU reference needs TFLite with Python bindings.
NPU_RUNTIME_PKGS:npu-rknpu ?= "librknnrt python3-tensorflow-lite"
NPU_DAEMON_PKGS:npu-rknpu ?= "rknn-server"
NPU_DEMO_PKGS:npu-rknpu ?= "rknn-mobilenet-demo rknn-yolov5-demo"
# npu-model-mediapipe-rknn: the .rknn models, golden outputs and .tflite references of the
# rk3588-evb/rk3576-evb profiles.
NPU_MODEL_PKGS:npu-rknpu ?= "npu-model-mobilenet-v1-quant npu-model-mediapipe-rknn"

# rocket (mainline stack): the Rocket module, TFLite with Python bindings (tflite_runtime, from
# meta-tensorflow-lite) and Mesa's Teflon delegate /usr/lib/libteflon.so.
NPU_DRIVER_PKGS:npu-rocket ?= "kernel-module-rocket"
NPU_RUNTIME_PKGS:npu-rocket ?= "python3-tensorflow-lite"
NPU_DELEGATE_PKGS:npu-rocket ?= "libteflon"
NPU_MODEL_PKGS:npu-rocket ?= "npu-model-mobilenet-v1-quant"

# SPDX-License-Identifier: MIT
# The Rockchip families. rknpu: the driver is built into linux-rockchip; RKNN-Toolkit-Lite2 is left
# out (wheels stop at CPython 3.12); TFLite's Python bindings run the suite's CPU reference.
NPU_RUNTIME_PKGS:npu-rknpu ?= "librknnrt python3-tensorflow-lite"
NPU_DAEMON_PKGS:npu-rknpu ?= "rknn-server"
NPU_DEMO_PKGS:npu-rknpu ?= "rknn-mobilenet-demo rknn-yolov5-demo"
NPU_MODEL_PKGS:npu-rknpu ?= "npu-model-mobilenet-v1-quant npu-model-mediapipe-rknn"

# rocket (mainline): the Rocket module, TFLite's Python bindings, Mesa's Teflon delegate.
NPU_DRIVER_PKGS:npu-rocket ?= "kernel-module-rocket"
NPU_RUNTIME_PKGS:npu-rocket ?= "python3-tensorflow-lite"
NPU_DELEGATE_PKGS:npu-rocket ?= "libteflon"
NPU_MODEL_PKGS:npu-rocket ?= "npu-model-mobilenet-v1-quant"

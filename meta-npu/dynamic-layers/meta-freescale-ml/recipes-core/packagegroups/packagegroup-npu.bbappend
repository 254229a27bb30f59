# SPDX-License-Identifier: MIT
# i.MX95 Neutron, package names as meta-freescale-ml (and meta-imx-ml) build them. The driver is
# built into the kernel; the udev rule opens /dev/neutron0 to the video group.
NPU_DRIVER_PKGS:npu-neutron ?= "neutron-udev-rules"
NPU_RUNTIME_PKGS:npu-neutron ?= "neutron tensorflow-lite"
NPU_DELEGATE_PKGS:npu-neutron ?= "tensorflow-lite-neutron-delegate"
# The unconverted MobileNet the profile compares with, at a path that does not follow TFLite's
# version; the converted one exists only once the user supplies it (neutron-converter is proprietary).
NPU_MODEL_PKGS:npu-neutron ?= "npu-model-mobilenet-v1-quant"
NPU_USER_MODELS:npu-neutron ?= "npu-model-neutron:NPU_NEUTRON_MODEL"

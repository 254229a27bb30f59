# SPDX-License-Identifier: MIT
# i.MX95 Neutron: npu-run's tflite backends import tflite_runtime, which meta-freescale-ml's
# (and meta-imx-ml's) tensorflow-lite installs into its main package.
NPU_TOOLS_BINDINGS:npu-neutron ?= "tensorflow-lite"

# SPDX-License-Identifier: MIT
# The TFLite Python bindings npu-run imports on Rockchip boards: the CPU reference runs of the
# acceptance suite on both stacks, and the Teflon delegate runs on the mainline (Rocket) stack.
# python3-tensorflow-lite (tflite_runtime) comes from meta-tensorflow-lite, which the Rockchip
# kas files include. The rknn backend itself needs only ctypes and librknnrt.
NPU_TOOLS_BINDINGS:npu-rknpu = "python3-tensorflow-lite"
NPU_TOOLS_BINDINGS:npu-rocket = "python3-tensorflow-lite"

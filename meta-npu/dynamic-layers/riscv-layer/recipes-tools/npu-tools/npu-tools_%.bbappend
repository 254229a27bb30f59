# SPDX-License-Identifier: MIT
# The cvi backend of npu-run drives model_runner (cviruntime-tools) and reads .npz with numpy.
NPU_TOOLS_BINDINGS:npu-cvitek-tpu ?= "cviruntime-tools python3-compression"

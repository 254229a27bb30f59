# SPDX-License-Identifier: MIT
# Sophgo CV18xx TPU (Milk-V Duo / Duo 256M / Duo S with meta-riscv): the family's packages.
# NPU_FAMILY = "cvitek-tpu" is set by kas/milkv-duo256m.yml (or local.conf).
NPU_DRIVER_PKGS:npu-cvitek-tpu ?= "cvitek-tpu"
NPU_RUNTIME_PKGS:npu-cvitek-tpu ?= "cviruntime cviruntime-tools cnpy-cvitek"
NPU_DEMO_PKGS:npu-cvitek-tpu ?= "cviruntime-samples"
# The cvimodel the profile runs: the user compiles it with TPU-MLIR (npu-model-cvimodel).
NPU_USER_MODELS:npu-cvitek-tpu ?= "npu-model-cvimodel:NPU_CVI_MODEL"

# SPDX-License-Identifier: MIT
SUMMARY = "The user's TPU-MLIR cvimodel for the CV18xx acceptance suite"
DESCRIPTION = "Installs a YOLOv5s compiled by TPU-MLIR for cv181x (INT8, symmetric, quantized input \
and output) as /usr/share/npu-models/yolov5_cv181x_int8_sym.cvimodel, the model the milkv-duo256m \
acceptance profile runs with model_runner."
HOMEPAGE = "https://github.com/sophgo/tpu-mlir"
# The cvimodel is the user's own build; the recipe only copies it. Its licence is the user's to state.
LICENSE = "CLOSED"

# TPU-MLIR is host software this layer does not build: the user compiles the model as the layer
# README shows (model_transform.py, run_calibration.py, model_deploy.py --quant_input
# --quant_output --quantize INT8 --processor cv181x) and sets NPU_CVI_MODEL (absolute path) and
# NPU_CVI_MODEL_SHA256 in local.conf.
NPU_CVI_MODEL ?= ""
NPU_CVI_MODEL_SHA256 ?= ""

NPU_USER_MODEL = "${NPU_CVI_MODEL}"
NPU_USER_MODEL_SHA256 = "${NPU_CVI_MODEL_SHA256}"
NPU_USER_MODEL_TARGET = "${datadir}/npu-models/yolov5_cv181x_int8_sym.cvimodel"
NPU_USER_MODEL_HINT = "NPU_CVI_MODEL is not set: compile the model with TPU-MLIR for cv181x (see the layer README) and set NPU_CVI_MODEL and NPU_CVI_MODEL_SHA256 in local.conf."
# --quant_input strips the input cast (TPU-MLIR model_deploy), so the model takes the INT8 tensor
# of model_transform's 1x3x640x640 input.
NPU_USER_MODEL_INPUTS = "int8:1x3x640x640"

inherit npu-user-model

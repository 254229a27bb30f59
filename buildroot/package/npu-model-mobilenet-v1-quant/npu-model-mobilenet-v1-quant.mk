################################################################################
#
# npu-model-mobilenet-v1-quant
#
################################################################################

NPU_MODEL_MOBILENET_V1_QUANT_VERSION = 2018_08_02
NPU_MODEL_MOBILENET_V1_QUANT_SOURCE = mobilenet_v1_1.0_224_quant.tgz
NPU_MODEL_MOBILENET_V1_QUANT_SITE = https://storage.googleapis.com/download.tensorflow.org/models/mobilenet_v1_$(NPU_MODEL_MOBILENET_V1_QUANT_VERSION)
# The archive carries no licence file and no licence statement for this 2018_08_02 release was
# found: Apache-2.0 is the licence of tensorflow/models, whose research/slim/nets/mobilenet_v1.md
# publishes the MobileNet v1 quantized checkpoints (release 2018_02_22); this release is taken
# to be under the same terms.
NPU_MODEL_MOBILENET_V1_QUANT_LICENSE = Apache-2.0
# The archive holds the model files at its top level: keep every path component.
NPU_MODEL_MOBILENET_V1_QUANT_STRIP_COMPONENTS = 0

define NPU_MODEL_MOBILENET_V1_QUANT_INSTALL_TARGET_CMDS
	$(INSTALL) -D -m 0644 $(@D)/mobilenet_v1_1.0_224_quant.tflite \
		$(TARGET_DIR)/usr/share/npu-models/mobilenet_v1_1.0_224_quant.tflite
endef

$(eval $(generic-package))

################################################################################
#
# npu-model-mediapipe-rknn
#
################################################################################

# The mediapipe wheel carries the .tflite models (every platform's wheel has the same ones);
# the .rknn models, goldens and inputs are the files of meta-npu's Yocto recipe of this name,
# made by scripts/make-rknn-models (docs/rknn-models.md): one source for both build systems.
NPU_MODEL_MEDIAPIPE_RKNN_VERSION = 0.10.14
NPU_MODEL_MEDIAPIPE_RKNN_SOURCE = mediapipe-$(NPU_MODEL_MEDIAPIPE_RKNN_VERSION)-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl
NPU_MODEL_MEDIAPIPE_RKNN_SITE = https://files.pythonhosted.org/packages/2f/ee/2e9e730dc4d98c8a9541b57bad173bebddf0e4c78f179acc100248c58066
NPU_MODEL_MEDIAPIPE_RKNN_LICENSE = Apache-2.0
NPU_MODEL_MEDIAPIPE_RKNN_LICENSE_FILES = \
	mediapipe-$(NPU_MODEL_MEDIAPIPE_RKNN_VERSION).dist-info/LICENSE
NPU_MODEL_MEDIAPIPE_RKNN_DEPENDENCIES = host-python3
NPU_MODEL_MEDIAPIPE_RKNN_TFLITE = \
	face_detection/face_detection_short_range.tflite \
	face_landmark/face_landmark.tflite
NPU_MODEL_MEDIAPIPE_RKNN_SOCS = rk3588 rk3576

# A wheel is a zip archive: take the two models and the licence file out of it.
define NPU_MODEL_MEDIAPIPE_RKNN_EXTRACT_CMDS
	unzip -q -o $(NPU_MODEL_MEDIAPIPE_RKNN_DL_DIR)/$(NPU_MODEL_MEDIAPIPE_RKNN_SOURCE) \
		$(addprefix mediapipe/modules/,$(NPU_MODEL_MEDIAPIPE_RKNN_TFLITE)) \
		$(NPU_MODEL_MEDIAPIPE_RKNN_LICENSE_FILES) -d $(@D)
	cp -R $(NPU_LAYER_MEDIAPIPE_RKNN_FILES) $(@D)/rknn
endef

# Every file must have the sha256 rknn-models.json gives it, or the build stops.
define NPU_MODEL_MEDIAPIPE_RKNN_VERIFY
	$(HOST_DIR)/bin/python3 $(NPU_MODEL_MEDIAPIPE_RKNN_PKGDIR)/verify-rknn-models.py \
		$(@D)/rknn $(@D)
endef
NPU_MODEL_MEDIAPIPE_RKNN_PRE_INSTALL_TARGET_HOOKS += NPU_MODEL_MEDIAPIPE_RKNN_VERIFY

define NPU_MODEL_MEDIAPIPE_RKNN_INSTALL_TARGET_CMDS
	$(foreach m,$(NPU_MODEL_MEDIAPIPE_RKNN_TFLITE), \
		$(INSTALL) -D -m 0644 $(@D)/mediapipe/modules/$(m) \
			$(TARGET_DIR)/usr/share/npu-models/$(notdir $(m))$(sep))
	$(INSTALL) -D -m 0644 -t $(TARGET_DIR)/usr/share/npu-models/rknn \
		$(@D)/rknn/rknn-models.json $(@D)/rknn/*.in0.npy
	$(foreach soc,$(NPU_MODEL_MEDIAPIPE_RKNN_SOCS), \
		$(INSTALL) -D -m 0644 -t $(TARGET_DIR)/usr/share/npu-models/rknn/$(soc) \
			$(@D)/rknn/$(soc)/*.rknn $(@D)/rknn/$(soc)/*.npy$(sep))
endef

$(eval $(generic-package))

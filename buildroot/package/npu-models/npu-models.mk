################################################################################
#
# npu-models
#
################################################################################

NPU_MODELS_VERSION = 1.0
NPU_MODELS_DIR = $(call qstrip,$(BR2_PACKAGE_NPU_MODELS_DIR))
# The local site method needs a directory even when the package is off: fall back to this one.
NPU_MODELS_SITE = $(or $(NPU_MODELS_DIR),$(BR2_EXTERNAL_NPU_PATH)/package/npu-models)
NPU_MODELS_SITE_METHOD = local
NPU_MODELS_LICENSE = user-provided
NPU_MODELS_REDISTRIBUTE = NO

ifeq ($(BR_BUILDING),y)
ifeq ($(BR2_PACKAGE_NPU_MODELS),y)
ifeq ($(wildcard $(NPU_MODELS_DIR)/*.cvimodel),)
$(error BR2_PACKAGE_NPU_MODELS_DIR ("$(NPU_MODELS_DIR)") holds no .cvimodel file: set it to the directory TPU-MLIR wrote the models to)
endif
endif
endif

define NPU_MODELS_INSTALL_TARGET_CMDS
	mkdir -p $(TARGET_DIR)/usr/share/npu-models
	cd $(@D) && for f in *.cvimodel *_in.npz *_ref.npz; do \
		[ -e "$$f" ] || continue; \
		$(INSTALL) -m 0644 "$$f" $(TARGET_DIR)/usr/share/npu-models/; \
	done
	cd $(TARGET_DIR)/usr/share/npu-models && \
		sha256sum $$(ls | grep -v '^SHA256SUMS$$') > SHA256SUMS
endef

$(eval $(generic-package))

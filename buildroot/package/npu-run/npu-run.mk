################################################################################
#
# npu-run
#
################################################################################

# The tools are part of this repository: the Yocto layer and this tree share one source.
NPU_RUN_VERSION = 1.0.0
NPU_RUN_SITE = $(BR2_EXTERNAL_NPU_PATH)/../meta-npu/recipes-tools/npu-tools/files
NPU_RUN_SITE_METHOD = local
NPU_RUN_LICENSE = MIT

define NPU_RUN_INSTALL_TARGET_CMDS
	$(INSTALL) -D -m 0755 $(@D)/npu-run $(TARGET_DIR)/usr/bin/npu-run
	$(INSTALL) -D -m 0755 $(@D)/npu-info $(TARGET_DIR)/usr/bin/npu-info
	mkdir -p $(TARGET_DIR)/usr/share/npu-tools
	cp -R $(@D)/npu_target $(TARGET_DIR)/usr/share/npu-tools/
	find $(TARGET_DIR)/usr/share/npu-tools -name __pycache__ -prune -exec rm -rf {} +
endef

$(eval $(generic-package))

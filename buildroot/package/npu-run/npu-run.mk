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
NPU_RUN_DEPENDENCIES = host-python3

define NPU_RUN_INSTALL_TARGET_CMDS
	$(INSTALL) -D -m 0755 $(@D)/npu-run $(TARGET_DIR)/usr/bin/npu-run
	$(INSTALL) -D -m 0755 $(@D)/npu-info $(TARGET_DIR)/usr/bin/npu-info
	mkdir -p $(TARGET_DIR)/usr/share/npu-tools
	cp -R $(@D)/npu_target $(TARGET_DIR)/usr/share/npu-tools/
	find $(TARGET_DIR)/usr/share/npu-tools -name __pycache__ -prune -exec rm -rf {} +
endef

# The build manifest the acceptance suite compares the board with (npu-info reads it), once
# every package is in the target: the route's packages and versions, the models' sha256s.
# The kernel's version is what it reports at run time (kernelrelease). Rocket has no version
# of its own: the kernel's stands for it. The RKNPU driver version of the BSP tree could not be
# read, so the manifest does not claim one (null), as on the Yocto side.
NPU_RUN_KERNEL = linux:$(if $(BR2_LINUX_KERNEL),$(LINUX_VERSION_PROBED))
ifeq ($(BR2_NPU_ROCKET),y)
NPU_RUN_MANIFEST_ROLES = --family rocket --driver $(NPU_RUN_KERNEL) \
	--runtime python-ai-edge-litert:$(PYTHON_AI_EDGE_LITERT_VERSION) \
	--delegate mesa3d-teflon:$(MESA3D_TEFLON_VERSION)
else ifeq ($(BR2_NPU_RKNPU_BSP_KERNEL),y)
NPU_RUN_MANIFEST_ROLES = --family rknpu --driver linux: \
	--runtime librknnrt:$(LIBRKNNRT_VERSION) --daemon rknn-server:$(RKNN_SERVER_VERSION)
else ifeq ($(BR2_PACKAGE_CVI_TPU),y)
NPU_RUN_MANIFEST_ROLES = --family cvitek-tpu --driver cvi-tpu: \
	--runtime cviruntime:$(CVIRUNTIME_VERSION)
else
NPU_RUN_MANIFEST_ROLES = --family none
endif

define NPU_RUN_WRITE_MANIFEST
	$(HOST_DIR)/bin/python3 $(NPU_RUN_PKGDIR)/npu-manifest.py $(TARGET_DIR) \
		--machine $(or $(call qstrip,$(BR2_NPU_ROCKCHIP_BOARD)),$(call qstrip,$(BR2_TARGET_GENERIC_HOSTNAME))) \
		--kernel $(NPU_RUN_KERNEL) $(NPU_RUN_MANIFEST_ROLES)
endef
NPU_RUN_TARGET_FINALIZE_HOOKS += NPU_RUN_WRITE_MANIFEST

$(eval $(generic-package))

################################################################################
#
# librknnrt
#
################################################################################

# airockchip/rknn-toolkit2 tag v2.3.2. Every RKNN package (rknn-server, the demos) builds
# from this one archive, downloaded once into the same DL_SUBDIR.
LIBRKNNRT_VERSION = 2.3.2
LIBRKNNRT_COMMIT = 42aa1d426c0a9e0869b6374edba009f7208a1926
LIBRKNNRT_SITE = $(call github,airockchip,rknn-toolkit2,$(LIBRKNNRT_COMMIT))
LIBRKNNRT_SOURCE = rknn-toolkit2-$(LIBRKNNRT_COMMIT).tar.gz
LIBRKNNRT_DL_SUBDIR = rknn-toolkit2
LIBRKNNRT_LICENSE = Rockchip-RKNN (proprietary)
LIBRKNNRT_LICENSE_FILES = LICENSE
LIBRKNNRT_REDISTRIBUTE = NO
LIBRKNNRT_INSTALL_STAGING = YES
# GitHub generates this archive on request; its sha256 can only be known by downloading it,
# which was not possible here (see librknnrt.hash). The licence file hash is checked.
BR_NO_CHECK_HASH_FOR += $(LIBRKNNRT_SOURCE)

LIBRKNNRT_API_DIR = $(@D)/rknpu2/runtime/Linux/librknn_api
LIBRKNNRT_HEADERS = rknn_api.h rknn_custom_op.h rknn_matmul_api.h
# The build stops unless server and runtime report this release (one sentence, exit 1).
LIBRKNNRT_VERSION_CHECK = $(NPU_LAYER_RKNPU2_FILES)/rknn-version-check.sh

define LIBRKNNRT_INSTALL_STAGING_CMDS
	$(INSTALL) -D -m 0755 $(LIBRKNNRT_API_DIR)/aarch64/librknnrt.so \
		$(STAGING_DIR)/usr/lib/librknnrt.so
	$(foreach h,$(LIBRKNNRT_HEADERS), \
		$(INSTALL) -D -m 0644 $(LIBRKNNRT_API_DIR)/include/$(h) \
			$(STAGING_DIR)/usr/include/$(h)$(sep))
endef

define LIBRKNNRT_INSTALL_TARGET_CMDS
	sh $(LIBRKNNRT_VERSION_CHECK) --runtime $(LIBRKNNRT_API_DIR)/aarch64/librknnrt.so \
		--expect $(LIBRKNNRT_VERSION)
	$(INSTALL) -D -m 0755 $(LIBRKNNRT_API_DIR)/aarch64/librknnrt.so \
		$(TARGET_DIR)/usr/lib/librknnrt.so
endef

$(eval $(generic-package))

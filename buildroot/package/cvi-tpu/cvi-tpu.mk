################################################################################
#
# cvi-tpu
#
################################################################################

# sophgo/osdrv branch sg200x-dev ("osdrv: weekly rls 2024.10.14").
CVI_TPU_VERSION = 28215f2d37b108de7a29ed26006878135749c886
CVI_TPU_SITE = https://github.com/sophgo/osdrv.git
CVI_TPU_SITE_METHOD = git
# No licence file in osdrv: the TPU driver's header grants GPL-2.0 or later and all three
# modules say MODULE_LICENSE("GPL").
CVI_TPU_LICENSE = GPL-2.0+
CVI_TPU_LICENSE_FILES = interdrv/tpu/common/cvi_tpu_interface.c
# The archive Buildroot makes of this commit could not be produced here to hash it (the
# snapshot used to read the repository lacks three firmware blobs of extdrv/wireless), so
# the download is exempted from the hash check rather than given an unverified hash.
BR_NO_CHECK_HASH_FOR += $(CVI_TPU_SOURCE)

CVI_TPU_CHIP = $(call qstrip,$(BR2_NPU_CVI_CHIP))

# Order matters: base links against the symbols sys exports (base/Makefile reads
# $(PWD)/../sys/Module.symvers; the kernel-module infrastructure sets PWD per subdir).
CVI_TPU_MODULE_SUBDIRS = interdrv/sys interdrv/base interdrv/tpu
CVI_TPU_MODULE_MAKE_OPTS = \
	CVIARCH=$(call UPPERCASE,$(CVI_TPU_CHIP)) \
	CVIARCH_L=$(CVI_TPU_CHIP)

# Load order at boot: base needs sys; tpu is independent but the chip id comes from base.
define CVI_TPU_INSTALL_INIT_SYSV
	$(INSTALL) -D -m 0755 $(CVI_TPU_PKGDIR)/S05cvi-tpu \
		$(TARGET_DIR)/etc/init.d/S05cvi-tpu
	$(SED) 's/@CHIP@/$(CVI_TPU_CHIP)/g' $(TARGET_DIR)/etc/init.d/S05cvi-tpu
endef

define CVI_TPU_INSTALL_INIT_SYSTEMD
	mkdir -p $(TARGET_DIR)/usr/lib/modules-load.d
	printf '%s\n' $(CVI_TPU_CHIP)_sys $(CVI_TPU_CHIP)_base $(CVI_TPU_CHIP)_tpu \
		> $(TARGET_DIR)/usr/lib/modules-load.d/cvi-tpu.conf
endef

$(eval $(kernel-module))
$(eval $(generic-package))

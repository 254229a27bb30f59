################################################################################
#
# cviruntime
#
################################################################################

# sophgo/cviruntime branch sg200x-dev ("[feat] cviruntime opensource for cv18xx soc.").
CVIRUNTIME_VERSION = 3f4938648950a7f3bf9a19c320ca9fae7c52de20
CVIRUNTIME_SITE = https://github.com/sophgo/cviruntime.git
CVIRUNTIME_SITE_METHOD = git
# No LICENSE file. 23 files say "Copyright (C) Cvitek Co., Ltd. 2019-2020. All rights
# reserved." with no licence grant (include/cviruntime.h among them); two copied kernel
# headers are GPL (src/soc/common/linux/ion.h GPL-2.0, bm_npu_ioctl.h GPL-2.0+). The
# all-rights-reserved code is not redistributed by legal-info.
CVIRUNTIME_LICENSE = PROPRIETARY, GPL-2.0 (ion.h), GPL-2.0+ (bm_npu_ioctl.h)
CVIRUNTIME_LICENSE_FILES = \
	include/cviruntime.h \
	src/soc/common/linux/ion.h \
	src/soc/common/linux/bm_npu_ioctl.h
CVIRUNTIME_REDISTRIBUTE = NO
CVIRUNTIME_INSTALL_STAGING = YES
CVIRUNTIME_DEPENDENCIES = cvi-cnpy cvikernel flatbuffers host-cvibuilder zlib
CVIRUNTIME_CONF_OPTS = \
	-DCHIP=$(call qstrip,$(BR2_NPU_CVI_CHIP)) \
	-DRUNTIME=SOC \
	-DCVIKERNEL_PATH=$(STAGING_DIR)/usr \
	-DCNPY_PATH=$(STAGING_DIR)/usr \
	-DFLATBUFFERS_PATH=$(STAGING_DIR)/usr \
	-DCVIBUILDER_PATH=$(HOST_DIR) \
	-DENABLE_TEST=OFF \
	-DENABLE_PYRUNTIME=OFF

# The SDK helper scripts CMakeLists.txt installs at the prefix root assume the SDK tarball
# layout (envs_tpu_sdk.sh, regression_*.sh), not /usr.
define CVIRUNTIME_REMOVE_SDK_SCRIPTS
	rm -f $(TARGET_DIR)/usr/envs_tpu_sdk.sh $(TARGET_DIR)/usr/regression_*.sh
endef
CVIRUNTIME_POST_INSTALL_TARGET_HOOKS += CVIRUNTIME_REMOVE_SDK_SCRIPTS

# The .hash file holds the hash of the archive Buildroot 2024.02 makes (-br1). Later
# Buildroot versions (2025.02, which duo-buildroot-sdk-v2 bundles) make a -git4 archive with
# tar >= 1.35, which could not be reproduced here (host tar 1.34): that archive is exempted
# from the hash check rather than given an unverified hash.
ifeq ($(BR_FMT_VERSION_git),-git4)
BR_NO_CHECK_HASH_FOR += $(CVIRUNTIME_SOURCE)
endif

$(eval $(cmake-package))

################################################################################
#
# cvikernel
#
################################################################################

# sophgo/cvikernel branch sg200x-dev ("[feat] cvikernel opensource for cv18xx soc.").
CVIKERNEL_VERSION = 9f1f57a19c3c281a931dfc71b318494487193d56
CVIKERNEL_SITE = https://github.com/sophgo/cvikernel.git
CVIKERNEL_SITE_METHOD = git
# No licence file and no licence notice anywhere in the repository: nothing grants a
# licence, so the sources are not redistributed by legal-info.
CVIKERNEL_LICENSE = PROPRIETARY
CVIKERNEL_REDISTRIBUTE = NO
CVIKERNEL_INSTALL_STAGING = YES
CVIKERNEL_CONF_OPTS = -DCHIP=$(call qstrip,$(BR2_NPU_CVI_CHIP))

# The .hash file holds the hash of the archive Buildroot 2024.02 makes (-br1). Later
# Buildroot versions (2025.02, which duo-buildroot-sdk-v2 bundles) make a -git4 archive with
# tar >= 1.35, which could not be reproduced here (host tar 1.34): that archive is exempted
# from the hash check rather than given an unverified hash.
ifeq ($(BR_FMT_VERSION_git),-git4)
BR_NO_CHECK_HASH_FOR += $(CVIKERNEL_SOURCE)
endif

$(eval $(cmake-package))

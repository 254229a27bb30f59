################################################################################
#
# cvi-cnpy
#
################################################################################

# sophgo/cnpy branch tpu ("[feat] cnpy opensource for cv18xx soc.").
CVI_CNPY_VERSION = 2f56f4c23ea840f9d15c43801368cf4a089efa84
CVI_CNPY_SITE = https://github.com/sophgo/cnpy.git
CVI_CNPY_SITE_METHOD = git
CVI_CNPY_LICENSE = MIT
CVI_CNPY_LICENSE_FILES = LICENSE
CVI_CNPY_INSTALL_STAGING = YES
CVI_CNPY_DEPENDENCIES = zlib
CVI_CNPY_CONF_OPTS = -DENABLE_STATIC=OFF

# mat2npz, npy2mat and npz2mat are host-side helpers (Python with scipy): not for the target.
define CVI_CNPY_REMOVE_HELPERS
	rm -f $(addprefix $(TARGET_DIR)/usr/bin/,mat2npz npy2mat npz2mat)
endef
CVI_CNPY_POST_INSTALL_TARGET_HOOKS += CVI_CNPY_REMOVE_HELPERS

# The .hash file holds the hash of the archive Buildroot 2024.02 makes (-br1). Later
# Buildroot versions (2025.02, which duo-buildroot-sdk-v2 bundles) make a -git4 archive with
# tar >= 1.35, which could not be reproduced here (host tar 1.34): that archive is exempted
# from the hash check rather than given an unverified hash.
ifeq ($(BR_FMT_VERSION_git),-git4)
BR_NO_CHECK_HASH_FOR += $(CVI_CNPY_SOURCE)
endif

$(eval $(cmake-package))

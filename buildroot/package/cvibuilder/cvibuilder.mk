################################################################################
#
# cvibuilder
#
################################################################################

# sophgo/cvibuilder branch sg200x-dev: the cvimodel flatbuffers schema, compiled by the host
# flatc into the C++ headers cviruntime includes. Host only.
CVIBUILDER_VERSION = 4309f2a649fc7cfe7160389d52a81c469dbdd7bc
CVIBUILDER_SITE = https://github.com/sophgo/cvibuilder.git
CVIBUILDER_SITE_METHOD = git
# No licence file and no notice in its five files: nothing grants a licence.
CVIBUILDER_LICENSE = PROPRIETARY
CVIBUILDER_REDISTRIBUTE = NO
HOST_CVIBUILDER_DEPENDENCIES = host-flatbuffers
HOST_CVIBUILDER_CONF_OPTS = -DFLATBUFFERS_PATH=$(HOST_DIR)

# The .hash file holds the hash of the archive Buildroot 2024.02 makes (-br1). Later
# Buildroot versions (2025.02, which duo-buildroot-sdk-v2 bundles) make a -git4 archive with
# tar >= 1.35, which could not be reproduced here (host tar 1.34): that archive is exempted
# from the hash check rather than given an unverified hash. A host-only package has only
# HOST_CVIBUILDER_SOURCE (CVIBUILDER_SOURCE stays empty).
ifeq ($(BR_FMT_VERSION_git),-git4)
BR_NO_CHECK_HASH_FOR += $(HOST_CVIBUILDER_SOURCE)
endif

$(eval $(host-cmake-package))

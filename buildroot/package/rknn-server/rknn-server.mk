################################################################################
#
# rknn-server
#
################################################################################

RKNN_SERVER_VERSION = $(LIBRKNNRT_VERSION)
RKNN_SERVER_SITE = $(LIBRKNNRT_SITE)
RKNN_SERVER_SOURCE = $(LIBRKNNRT_SOURCE)
RKNN_SERVER_DL_SUBDIR = $(LIBRKNNRT_DL_SUBDIR)
RKNN_SERVER_LICENSE = $(LIBRKNNRT_LICENSE)
RKNN_SERVER_LICENSE_FILES = $(LIBRKNNRT_LICENSE_FILES)
RKNN_SERVER_REDISTRIBUTE = NO
RKNN_SERVER_DEPENDENCIES = librknnrt
# The same archive as librknnrt's: see librknnrt.mk for why its hash is not checked.
BR_NO_CHECK_HASH_FOR += $(RKNN_SERVER_SOURCE)

RKNN_SERVER_BIN_DIR = $(@D)/rknpu2/runtime/Linux/rknn_server/aarch64/usr/bin

# Server and runtime must be of one release (RKNN SDK guide; the server only logs both
# versions at start and is not shown to refuse a mismatch): the build stops here instead, with
# one sentence from the check.
define RKNN_SERVER_INSTALL_TARGET_CMDS
	sh $(LIBRKNNRT_VERSION_CHECK) --server $(RKNN_SERVER_BIN_DIR)/rknn_server \
		--runtime $(STAGING_DIR)/usr/lib/librknnrt.so --expect $(LIBRKNNRT_VERSION)
	$(INSTALL) -D -m 0755 $(RKNN_SERVER_BIN_DIR)/rknn_server \
		$(TARGET_DIR)/usr/bin/rknn_server
	$(INSTALL) -D -m 0755 $(RKNN_SERVER_BIN_DIR)/start_rknn.sh \
		$(TARGET_DIR)/usr/bin/start_rknn.sh
	$(INSTALL) -D -m 0755 $(RKNN_SERVER_BIN_DIR)/restart_rknn.sh \
		$(TARGET_DIR)/usr/bin/restart_rknn.sh
endef

define RKNN_SERVER_INSTALL_INIT_SYSV
	$(INSTALL) -D -m 0755 $(RKNN_SERVER_PKGDIR)/S95rknn_server \
		$(TARGET_DIR)/etc/init.d/S95rknn_server
endef

# The unit is meta-npu's Yocto one (Restart=on-failure): one file for both build systems.
define RKNN_SERVER_INSTALL_INIT_SYSTEMD
	$(INSTALL) -D -m 0644 $(NPU_LAYER_RKNPU2_FILES)/rknn-server.service \
		$(TARGET_DIR)/usr/lib/systemd/system/rknn-server.service
endef

$(eval $(generic-package))

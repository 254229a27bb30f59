################################################################################
#
# rockchip-librga
#
################################################################################

# JeffyCN/mirrors branch linux-rga-multi: the commit JeffyCN/meta-rockchip walnascar
# (f5acd79b) builds in recipes-graphics/rockchip-librga/rockchip-librga.bb.
ROCKCHIP_LIBRGA_VERSION = c6105b06ade0e5dc7f16924c7f0f5e9dcdb198bc
ROCKCHIP_LIBRGA_SITE = $(call github,JeffyCN,mirrors,$(ROCKCHIP_LIBRGA_VERSION))
ROCKCHIP_LIBRGA_LICENSE = Apache-2.0
ROCKCHIP_LIBRGA_LICENSE_FILES = COPYING
ROCKCHIP_LIBRGA_INSTALL_STAGING = YES
ROCKCHIP_LIBRGA_DEPENDENCIES = libdrm
ROCKCHIP_LIBRGA_CONF_OPTS = -Dlibdrm=true
# GitHub generates this archive on request; its sha256 can only be known by downloading it,
# which was not possible here (see rockchip-librga.hash).
BR_NO_CHECK_HASH_FOR += $(ROCKCHIP_LIBRGA_SOURCE)

$(eval $(meson-package))

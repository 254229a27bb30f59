################################################################################
#
# mesa3d-teflon
#
################################################################################

# The Mesa of the Yocto side (openembedded-core wrynose mesa.inc, PV 26.0.5): the rocket
# driver exists from Mesa 25.3 on (Teflon from 25.1), so both are there.
MESA3D_TEFLON_VERSION = 26.0.5
MESA3D_TEFLON_SOURCE = mesa-$(MESA3D_TEFLON_VERSION).tar.xz
MESA3D_TEFLON_SITE = https://archive.mesa3d.org
MESA3D_TEFLON_LICENSE = MIT, SGI, Khronos
MESA3D_TEFLON_LICENSE_FILES = \
	docs/license.rst \
	licenses/MIT \
	licenses/SGI-B-2.0
MESA3D_TEFLON_CPE_ID_VENDOR = mesa3d
MESA3D_TEFLON_CPE_ID_PRODUCT = mesa

MESA3D_TEFLON_DEPENDENCIES = \
	host-bison \
	host-flex \
	host-python-mako \
	host-python-pyyaml \
	expat \
	libdrm \
	zlib

# Only the NPU: the rocket Gallium driver behind the Teflon frontend. No GL, EGL, GBM,
# Vulkan or window system, so nothing here overlaps with a system mesa3d.
MESA3D_TEFLON_CONF_OPTS = \
	-Dgallium-drivers=rocket \
	-Dvulkan-drivers= \
	-Dteflon=true \
	-Dplatforms= \
	-Dopengl=false \
	-Dglx=disabled \
	-Degl=disabled \
	-Dgbm=disabled \
	-Dgles1=disabled \
	-Dgles2=disabled \
	-Dglvnd=disabled \
	-Dgallium-va=disabled \
	-Dgallium-rusticl=false \
	-Dgallium-extra-hud=false \
	-Dmicrosoft-clc=disabled \
	-Dllvm=disabled \
	-Dvalgrind=disabled \
	-Dlibunwind=disabled \
	-Dlmsensors=disabled \
	-Dzstd=disabled

# meson install would also install Mesa's headers and pkg-config files; the delegate is
# the only file the target needs. pkg-meson builds in build/ up to Buildroot 2025.02.3 and in
# buildroot-build/ from 2025.02.4 on (Buildroot commit 4e95062f82): take whichever exists.
MESA3D_TEFLON_LIB = src/gallium/targets/teflon/libteflon.so
define MESA3D_TEFLON_INSTALL_TARGET_CMDS
	for dir in buildroot-build build; do \
		if [ -f $(@D)/$$dir/$(MESA3D_TEFLON_LIB) ]; then \
			$(INSTALL) -D -m 0755 $(@D)/$$dir/$(MESA3D_TEFLON_LIB) \
				$(TARGET_DIR)/usr/lib/libteflon.so || exit 1; \
			exit 0; \
		fi; \
	done; \
	echo "mesa3d-teflon: libteflon.so was not built in $(@D)/buildroot-build or $(@D)/build"; \
	exit 1
endef

$(eval $(meson-package))

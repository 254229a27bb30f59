# meta-npu's Yocto layer beside this tree: files both build systems use (one source).
NPU_LAYER = $(BR2_EXTERNAL_NPU_PATH)/../meta-npu
NPU_LAYER_RKNPU2_FILES = $(NPU_LAYER)/recipes-runtime/rknpu2/files
NPU_LAYER_RKNN_DEMOS_FILES = $(NPU_LAYER)/dynamic-layers/rockchip/recipes-npu/rknn-demos/files
NPU_LAYER_MEDIAPIPE_RKNN_FILES = $(NPU_LAYER)/recipes-models/npu-model-mediapipe-rknn/files

# Oldest Buildroot each part of this tree is made for: the CV18xx packages 2024.02, the
# Rockchip ones 2025.02 (CPython 3.12 or later for the LiteRT wheels, meson >= 1.4 for Mesa 26).
NPU_BR_VERSION = $(word 1,$(subst ., ,$(BR2_VERSION))).$(word 2,$(subst ., ,$(BR2_VERSION)))
npu-br-older-than = $(filter-out $(1),$(firstword $(sort $(1) $(NPU_BR_VERSION))))
NPU_ROCKCHIP_SELECTED = $(strip $(BR2_NPU_RKNPU_BSP_KERNEL)$(BR2_NPU_ROCKET) \
	$(BR2_PACKAGE_LIBRKNNRT)$(BR2_PACKAGE_MESA3D_TEFLON)$(BR2_PACKAGE_PYTHON_AI_EDGE_LITERT))
# $(call npu-version-below,A,B): non-empty when version A is below version B.
npu-version-below = $(filter-out $(2),$(shell printf '%s\n%s\n' '$(1)' '$(2)' | sort -V | head -n 1))
NPU_RKNN_SOC = $(call qstrip,$(BR2_NPU_RKNN_SOC))
NPU_ROCKCHIP_BOARD = $(call qstrip,$(BR2_NPU_ROCKCHIP_BOARD))
NPU_ROCKCHIP_BOARD_SOC = $(call UPPERCASE,$(word 2,$(subst -, ,$(NPU_ROCKCHIP_BOARD))))

ifeq ($(BR_BUILDING),y)
ifneq ($(call npu-br-older-than,2024.02),)
$(error meta-npu's Buildroot tree needs Buildroot 2024.02 or later, and this is Buildroot $(BR2_VERSION): use a Buildroot 2025.02.x LTS release)
endif
ifneq ($(NPU_ROCKCHIP_SELECTED),)
ifneq ($(call npu-br-older-than,2025.02),)
$(error meta-npu's Rockchip packages need Buildroot 2025.02 or later, and this is Buildroot $(BR2_VERSION): use a Buildroot 2025.02.x LTS release)
endif
endif
endif

include $(sort $(wildcard $(BR2_EXTERNAL_NPU_PATH)/package/*/*.mk))

# Rockchip's BSP kernel 6.1 at the commit JeffyCN/meta-rockchip walnascar (f5acd79b) builds
# (recipes-kernel/linux/linux-rockchip_6.1.bb: JeffyCN/mirrors, branch kernel-6.1-2024_04_14).
NPU_RK_BSP_KERNEL_TARBALL = https://github.com/JeffyCN/mirrors/archive/ea9e2a9344bfe7f1130dee8100173b6cb95445d2.tar.gz

ifeq ($(BR2_NPU_RKNPU_BSP_KERNEL),y)
# GitHub generates this archive on request: its sha256 can only be known by downloading it,
# which was not possible here (board/rockchip/linux.hash says so). Licence files are checked.
BR_NO_CHECK_HASH_FOR += $(LINUX_SOURCE)
LINUX_HASH_FILES = $(BR2_EXTERNAL_NPU_PATH)/board/rockchip/linux.hash
endif

# The machine whose kernel pieces kernel-check holds the kernel to: the BSP route's board, or the
# ROCK 5B of the Rocket route (rocket.cfg and the board DTB's NPU cores).
NPU_KERNEL_CHECK_MACHINE = $(if $(BR2_NPU_ROCKET),rock-5b,$(NPU_ROCKCHIP_BOARD))

ifneq ($(BR2_NPU_RKNPU_BSP_KERNEL)$(BR2_NPU_ROCKET),)
# Before the kernel compiles, scripts/kernel-check (beside this tree) builds the board DTB with
# the SRAM fragment (BSP route) from a copy of the kernel's dts tree, checks what the board's
# profile requires and that every option of rknpu.cfg / rocket.cfg is in the kernel's .config: a
# label the BSP tree lacks stops the build with one sentence, not with a dtc error. Exit 2 (it
# could not check, e.g. no PyYAML) only warns.
define NPU_LINUX_KERNEL_CHECK
	rc=0; python3 $(BR2_EXTERNAL_NPU_PATH)/../scripts/kernel-check --tree $(LINUX_DIR) \
		--machine $(NPU_KERNEL_CHECK_MACHINE) --config $(LINUX_DIR)/.config \
		--workdir $(BUILD_DIR)/npu-kernel-check || rc=$$?; \
	if [ $$rc = 1 ]; then exit 1; elif [ $$rc != 0 ]; then \
		echo "meta-npu: kernel-check could not check this kernel (above); building on"; fi
endef
LINUX_PRE_BUILD_HOOKS += NPU_LINUX_KERNEL_CHECK
endif

ifeq ($(BR2_NPU_ROCKET),y)
# Buildroot 2025.02's linux/linux.hash holds the hash of LICENSES/preferred/GPL-2.0 before
# Linux 6.17 changed it (Buildroot later split the file at 6.17, commit 0e3ddc9dc8): the 6.18
# kernel of this route is checked against our file alone, which has the 6.17+ hashes.
LINUX_HASH_FILES = $(BR2_EXTERNAL_NPU_PATH)/board/rock5b/linux.hash
endif

ifeq ($(BR_BUILDING),y)

ifeq ($(BR2_PACKAGE_LIBRKNNRT):$(BR2_NPU_ACCEPT_ROCKCHIP_RKNN_LICENSE),y:)
$(error librknnrt and the RKNN packages are under Rockchip's proprietary licence (https://github.com/airockchip/rknn-toolkit2/blob/v2.3.2/LICENSE): read it, and to accept it merge board/rockchip/accept-rknn-license.config (BR2_NPU_ACCEPT_ROCKCHIP_RKNN_LICENSE=y))
endif

ifeq ($(BR2_NPU_RKNPU_BSP_KERNEL),y)
ifeq ($(NPU_ROCKCHIP_BOARD),)
$(error board/rockchip/rknpu.config (Rockchip BSP kernel, RKNPU) needs one of this tree's base defconfigs, rockchip_rk3588_evb_defconfig or rockchip_rk3576_evb_defconfig, and this base sets no BR2_NPU_ROCKCHIP_BOARD: for Buildroot's rock5b_defconfig use the mainline fragment board/rock5b/npu.config)
endif
ifneq ($(NPU_RKNN_SOC),$(NPU_ROCKCHIP_BOARD_SOC))
$(error BR2_NPU_RKNN_SOC is "$(NPU_RKNN_SOC)" but the base defconfig is for $(NPU_ROCKCHIP_BOARD): merge board/rockchip/$(patsubst rockchip-%,%,$(NPU_ROCKCHIP_BOARD))/npu.config, the fragment of this board)
endif
ifneq ($(BR2_LINUX_KERNEL_CUSTOM_TARBALL):$(call qstrip,$(BR2_LINUX_KERNEL_CUSTOM_TARBALL_LOCATION)),y:$(NPU_RK_BSP_KERNEL_TARBALL))
$(error BR2_NPU_RKNPU_BSP_KERNEL needs Rockchip's BSP kernel, BR2_LINUX_KERNEL_CUSTOM_TARBALL_LOCATION="$(NPU_RK_BSP_KERNEL_TARBALL)" as board/rockchip/rknpu.config sets it, but this configuration builds Linux $(LINUX_VERSION) from elsewhere: merge board/rockchip/rknpu.config last)
endif
endif

ifeq ($(BR2_NPU_ROCKET),y)
ifneq ($(NPU_ROCKCHIP_BOARD),)
$(error board/rock5b/npu.config (Rocket, mainline kernel) needs a mainline base such as Buildroot's rock5b_defconfig, but this base is the Rockchip BSP board $(NPU_ROCKCHIP_BOARD): use board/rockchip/rknpu.config with it)
endif
ifneq ($(BR2_aarch64):$(BR2_LINUX_KERNEL),y:y)
$(error board/rock5b/npu.config (Rocket, mainline kernel) needs an aarch64 base that builds a kernel, such as Buildroot's rock5b_defconfig)
endif
ifneq ($(BR2_LINUX_KERNEL_CUSTOM_VERSION),y)
$(error the Rocket NPU driver (DRM_ACCEL_ROCKET) needs a kernel.org Linux 6.18 or later set with BR2_LINUX_KERNEL_CUSTOM_VERSION, as board/rock5b/npu.config does)
endif
ifneq ($(call npu-version-below,$(LINUX_VERSION),6.18),)
$(error the Rocket NPU driver (DRM_ACCEL_ROCKET) needs Linux 6.18 or later, and this configuration builds Linux $(LINUX_VERSION): set BR2_LINUX_KERNEL_CUSTOM_VERSION_VALUE as board/rock5b/npu.config does)
endif
endif

endif

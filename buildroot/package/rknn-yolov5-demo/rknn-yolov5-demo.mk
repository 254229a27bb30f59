################################################################################
#
# rknn-yolov5-demo
#
################################################################################

RKNN_YOLOV5_DEMO_VERSION = $(LIBRKNNRT_VERSION)
RKNN_YOLOV5_DEMO_SITE = $(LIBRKNNRT_SITE)
RKNN_YOLOV5_DEMO_SOURCE = $(LIBRKNNRT_SOURCE)
RKNN_YOLOV5_DEMO_DL_SUBDIR = $(LIBRKNNRT_DL_SUBDIR)
RKNN_YOLOV5_DEMO_LICENSE = $(LIBRKNNRT_LICENSE)
RKNN_YOLOV5_DEMO_LICENSE_FILES = $(LIBRKNNRT_LICENSE_FILES)
RKNN_YOLOV5_DEMO_REDISTRIBUTE = NO
# The same archive as librknnrt's: see librknnrt.mk for why its hash is not checked.
BR_NO_CHECK_HASH_FOR += $(RKNN_YOLOV5_DEMO_SOURCE)
RKNN_YOLOV5_DEMO_SUBDIR = rknpu2/examples/rknn_yolov5_demo
RKNN_YOLOV5_DEMO_DEPENDENCIES = librknnrt opencv4 rockchip-librga
RKNN_YOLOV5_DEMO_CONF_OPTS = \
	-DRKNN_USE_SYSTEM_LIBS=ON \
	-DTARGET_SOC=$(call qstrip,$(BR2_NPU_RKNN_SOC))

# The patch is meta-npu's Yocto one (build against the sysroot's librknnrt, librga and OpenCV,
# install with GNUInstallDirs): one file for both build systems.
define RKNN_YOLOV5_DEMO_APPLY_LAYER_PATCH
	$(APPLY_PATCHES) $(@D) $(NPU_LAYER_RKNN_DEMOS_FILES) \
		0001-rknn_yolov5_demo-\*.patch
endef
RKNN_YOLOV5_DEMO_POST_PATCH_HOOKS += RKNN_YOLOV5_DEMO_APPLY_LAYER_PATCH

$(eval $(cmake-package))

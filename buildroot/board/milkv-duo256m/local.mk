################################################################################
#
# local.mk: package overrides for the Milk-V Duo 256M (BR2_PACKAGE_OVERRIDE_FILE)
#
################################################################################

# Build the kernel from the SDK's own vendor tree (duo-buildroot-sdk-v2/linux_5.10), the
# one its build.sh boots: the TPU driver needs that tree's ION and streamline headers.
# check-package disable TypoInPackageVariable: an override file sets other packages' variables
LINUX_OVERRIDE_SRCDIR = $(TOPDIR)/../linux_5.10

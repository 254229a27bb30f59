# SPDX-License-Identifier: MIT
SUMMARY = "Image with the machine's NPU stack and what the acceptance suite needs"
DESCRIPTION = "A console image holding the NPU stack selected by NPU_FAMILY \
(packagegroup-npu), an SSH server for the on-target acceptance suite, and the build \
manifest /usr/share/meta-npu/build-manifest.json that the suite compares the board against."
LICENSE = "MIT"

IMAGE_FEATURES += "ssh-server-openssh"

IMAGE_INSTALL = " \
    packagegroup-core-boot \
    packagegroup-npu \
    ${CORE_IMAGE_EXTRA_INSTALL} \
"

inherit core-image npu-manifest

# SPDX-License-Identifier: MIT
# The Duo 256M's memory map header into U-Boot's sysroot output, only with the NPU feature and the
# CV18xx TPU family (see the .inc); otherwise nothing changes.
require ${@'u-boot-cvi-memmap.inc' if d.getVar('NPU_ENABLED') == '1' and d.getVar('NPU_FAMILY') == 'cvitek-tpu' else ''}

# SPDX-License-Identifier: MIT
# Neutron NPU kernel configuration and DMA pool overlay for NXP's linux-imx.
# Only with the NPU integration on (MACHINE_FEATURES or DISTRO_FEATURES "npu") and an i.MX95
# (NPU_FAMILY "neutron"); otherwise nothing is required and the recipe is untouched, so no task
# signature changes.
require ${@'linux-imx-npu.inc' if d.getVar('NPU_ENABLED') == '1' and d.getVar('NPU_FAMILY') == 'neutron' else ''}

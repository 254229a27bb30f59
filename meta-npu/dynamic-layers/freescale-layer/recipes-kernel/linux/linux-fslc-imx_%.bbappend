# SPDX-License-Identifier: MIT
# Neutron NPU kernel configuration and DMA pool overlay for linux-fslc-imx, the kernel that
# meta-freescale's imx-base.inc picks for NXP-BSP machines by default
# (IMX_DEFAULT_KERNEL:imx-nxp-bsp ??= "linux-fslc-imx"; the community fslc distros keep it,
# NXP's fsl-imx distros switch to linux-imx). Same gate and same .inc as linux-imx.
require ${@'linux-imx-npu.inc' if d.getVar('NPU_ENABLED') == '1' and d.getVar('NPU_FAMILY') == 'neutron' else ''}

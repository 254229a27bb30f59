# SPDX-License-Identifier: MIT
# RKNPU driver and NPU SRAM for linux-rockchip, the BSP 6.1 kernel of JeffyCN/meta-rockchip.
#
# Why "linux-%": JeffyCN/meta-rockchip and git.yoctoproject.org/meta-rockchip both register the
# collection "rockchip", and the mainline one has no linux-rockchip, where a narrow append would
# dangle. While an append is parsed, FILE (and so PN) is the append's own path, so the recipe is
# chosen inside the .inc by pn-linux-rockchip overrides, which apply once the recipe is finalised.
# nooelint: oelint.file.requirenotfound - resolves to the .inc beside this file, or to nothing
require ${@'linux-rockchip-rknpu.inc' if d.getVar('NPU_ENABLED') == '1' and d.getVar('NPU_FAMILY') == 'rknpu' else ''}

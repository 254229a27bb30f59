# SPDX-License-Identifier: MIT
# RKNPU driver and NPU SRAM for linux-rockchip, the BSP 6.1 kernel of JeffyCN/meta-rockchip.
#
# Why "linux-%" and not linux-rockchip_%.bbappend: JeffyCN/meta-rockchip and
# git.yoctoproject.org/meta-rockchip both register the collection "rockchip", so this directory
# is parsed in both stacks, and the mainline one has no linux-rockchip: a narrow append would
# dangle there (a parse error). "linux-%" always matches oe-core's linux-libc-headers and
# linux-yocto; every recipe but linux-rockchip gets an empty require. Rocket's append for
# linux-yocto is narrowly named, in meta-npu/recipes-kernel/linux/.
# nooelint: oelint.file.requirenotfound - resolves to the .inc beside this file, or to nothing
require ${@'linux-rockchip-rknpu.inc' if d.getVar('PN') == 'linux-rockchip' and d.getVar('NPU_ENABLED') == '1' and d.getVar('NPU_FAMILY') == 'rknpu' else ''}

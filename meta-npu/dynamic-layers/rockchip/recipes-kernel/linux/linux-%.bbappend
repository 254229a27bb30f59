# SPDX-License-Identifier: MIT
# The NPU kernel changes of both Rockchip stacks, chosen by recipe name at parse time:
#   linux-rockchip  JeffyCN/meta-rockchip (vendor BSP 6.1): RKNPU driver + NPU SRAM
#   linux-yocto     git.yoctoproject.org/meta-rockchip (mainline): Rocket accel driver
#
# Why a wildcard and not linux-rockchip_%.bbappend: both Rockchip layers register the same
# collection "rockchip", so everything under dynamic-layers/rockchip/ is parsed in both stacks,
# and a linux-rockchip bbappend would dangle (a parse error) in the mainline stack, which has no
# linux-rockchip recipe. "linux-%" always matches a recipe of oe-core (linux-libc-headers,
# linux-yocto), so it can never dangle; every other linux-* recipe gets an empty require.
# Nothing is required unless the NPU integration is on (NPU_ENABLED, meta-npu/conf/layer.conf),
# so adding the layer changes no kernel signature.
# nooelint: oelint.vars.noncoreoverride - a parse-time selector, not a setting of the kernel
NPU_KERNEL_INC = "${@ {'linux-rockchip': 'linux-rockchip-rknpu.inc', 'linux-yocto': 'linux-yocto-rocket.inc'}.get(d.getVar('PN'), '') if d.getVar('NPU_ENABLED') == '1' else '' }"
# nooelint: oelint.file.requirenotfound - resolves to an .inc beside this file, or to nothing
require ${NPU_KERNEL_INC}

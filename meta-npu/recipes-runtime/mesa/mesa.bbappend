# SPDX-License-Identifier: MIT
# Mesa's Gallium "rocket" driver and the Teflon TFLite delegate (libteflon.so) for the mainline
# Rockchip stack, only with the NPU feature and the rocket family; every other Mesa is untouched.
require ${@'mesa-teflon.inc' if d.getVar('NPU_ENABLED') == '1' and d.getVar('NPU_FAMILY') == 'rocket' else ''}

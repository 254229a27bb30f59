# SPDX-License-Identifier: MIT
# Mesa's Gallium "rocket" driver and the Teflon TFLite delegate (libteflon.so) for the mainline
# Rockchip stack. oe-core wrynose mesa.inc has PACKAGECONFIG[rocket], PACKAGECONFIG[teflon] and
# the package libteflon; walnascar's Mesa 24.0 has neither. Only when the machine's NPU family
# is "rocket", so the vendor stack's Mesa is untouched.
require ${@ 'mesa-teflon.inc' if d.getVar('NPU_ENABLED') == '1' and d.getVar('NPU_FAMILY') == 'rocket' else '' }

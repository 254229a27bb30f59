# SPDX-License-Identifier: MIT
# Rocket, the mainline NPU driver of RK3588, for linux-yocto; nothing without the NPU feature and
# the rocket family, so no other linux-yocto build changes.
require ${@'linux-yocto-rocket.inc' if d.getVar('NPU_ENABLED') == '1' and d.getVar('NPU_FAMILY') == 'rocket' else ''}

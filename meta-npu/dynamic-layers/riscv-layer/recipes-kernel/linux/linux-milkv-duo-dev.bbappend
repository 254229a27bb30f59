# SPDX-License-Identifier: MIT
# The Duo 256M as an SG2002 with its TPU (kernel config, board device tree; see the .inc), only
# when the NPU feature is asked for (NPU_ENABLED comes from meta-npu's layer.conf); otherwise
# this append changes nothing.
require ${@'linux-milkv-duo-dev-npu.inc' if d.getVar('NPU_ENABLED') == '1' else ''}

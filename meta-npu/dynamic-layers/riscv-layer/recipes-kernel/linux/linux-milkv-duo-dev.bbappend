# TPU/ION device-tree overlay for the CV181x boards, only when the NPU feature is asked for
# (NPU_ENABLED comes from meta-npu's layer.conf); otherwise this append changes nothing.
require ${@'linux-milkv-duo-dev-npu.inc' if d.getVar('NPU_ENABLED') == '1' else ''}

# SPDX-License-Identifier: MIT
# npu-family.bbclass: lets a recipe select by NPU family with overrides (VAR:npu-neutron,
# VAR:npu-rknpu, VAR:npu-rocket, VAR:npu-cvitek-tpu). Only meta-npu's own recipes inherit it.

# Without the feature npu-base.bbclass is not inherited and NPU_FAMILY is unset: "none". No default
# is assigned here, which would replace npu-base's own (the machine's family).
OVERRIDES .= ":npu-${@d.getVar('NPU_FAMILY') or 'none'}"

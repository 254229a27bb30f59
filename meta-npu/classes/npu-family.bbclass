# SPDX-License-Identifier: MIT
# npu-family.bbclass: lets a recipe select by NPU family with overrides (VAR:npu-neutron,
# VAR:npu-rknpu, VAR:npu-rocket, VAR:npu-cvitek-tpu). Only meta-npu's own recipes inherit it.

# npu-base.bbclass sets the family when the NPU feature is on; "none" keeps the recipes parseable
# without it.
NPU_FAMILY ??= "none"
OVERRIDES .= ":npu-${NPU_FAMILY}"

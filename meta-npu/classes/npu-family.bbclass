# SPDX-License-Identifier: MIT
# npu-family.bbclass: lets a recipe select by NPU family with overrides.
#
# NPU_FAMILY is resolved in npu-base.bbclass (inherited configuration-wide). Inheriting this
# class adds the override "npu-<family>", so a recipe writes VAR:npu-neutron, VAR:npu-rknpu,
# VAR:npu-rocket or VAR:npu-cvitek-tpu. Only meta-npu's own recipes inherit it.

OVERRIDES .= ":npu-${NPU_FAMILY}"

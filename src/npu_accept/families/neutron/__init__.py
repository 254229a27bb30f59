# SPDX-License-Identifier: MIT
"""The neutron family: its diagnosis signatures and version pairings (signatures.yaml,
versions.yaml), checks, findings, flashing method and pairing rules (the modules here)."""

# What a neutron board's profile must state (null says the check does not apply).
PROFILE_SECTIONS = {
    "pairing": "check 10 of a neutron board needs pairing.converter (the Neutron SDK the models "
    "were converted with)",
}

# The kernel lines of this family's NPU (npu-diagnose counts their errors as the NPU stack's).
KERNEL_SUBJECT = r"neutron|Neutron"

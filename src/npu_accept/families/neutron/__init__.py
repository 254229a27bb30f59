# SPDX-License-Identifier: MIT
"""The neutron family: its diagnosis signatures (signatures.yaml)."""

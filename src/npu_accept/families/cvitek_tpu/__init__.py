# SPDX-License-Identifier: MIT
"""The cvitek-tpu family: its diagnosis signatures (signatures.yaml)."""

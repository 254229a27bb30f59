# SPDX-License-Identifier: MIT
"""The rknpu family: its diagnosis signatures (signatures.yaml)."""

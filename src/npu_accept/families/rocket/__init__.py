# SPDX-License-Identifier: MIT
"""The rocket family: its diagnosis signatures (signatures.yaml)."""

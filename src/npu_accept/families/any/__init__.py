# SPDX-License-Identifier: MIT
"""The every NPU family family: its diagnosis signatures (signatures.yaml)."""

# SPDX-License-Identifier: MIT
"""The every-family package: what any NPU board can print (signatures.yaml) and the flashing
method any board with an SD card can use (flash.py)."""

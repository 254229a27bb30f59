# SPDX-License-Identifier: MIT
"""Check 10 — The converter or toolkit that made each model pairs with the runtime on the board."""


def test_pairing(judge):
    judge("pairing")

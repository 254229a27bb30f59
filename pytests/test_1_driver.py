# SPDX-License-Identifier: MIT
"""Check 1 — Driver present, version from the right place, at least the profile minimum, equal to the
build manifest."""


def test_driver(judge):
    judge("driver")

# SPDX-License-Identifier: MIT
"""The two kinds of failure the tools report: bad usage (exit 2) and a failed run (exit 1)."""


class UsageError(Exception):
    """The command line or an input file is wrong; the message is one sentence naming the fix."""


class RunFailure(Exception):
    """The model could not be loaded, delegated or invoked; reported in the JSON `errors` (exit 1)."""

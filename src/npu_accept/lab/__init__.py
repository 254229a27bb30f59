# SPDX-License-Identifier: MIT
"""Lab integration: labgrid environments as suite targets, LAVA job templates, the oeqa bridge."""

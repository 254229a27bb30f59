# SPDX-License-Identifier: MIT
"""The cvitek-tpu family's checks, one module per check (`IMPLEMENTS` as in
`npu_accept.checks.registry`): memory (the ION heap) and pairing (the cvimodel's chip)."""

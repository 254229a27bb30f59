# SPDX-License-Identifier: MIT
"""The rknpu family's checks, one module per check it judges its own way (each with its
`IMPLEMENTS`, `COLLECTORS`, `SERVES` as in `npu_accept.checks.registry`): memory (SRAM), runtime
(rknn_server restart), performance (pinned governors, core masks), pairing (RKNN-Toolkit2 against
librknnrt) and logs (the RKNN_LOG_LEVEL=4 log of each model)."""

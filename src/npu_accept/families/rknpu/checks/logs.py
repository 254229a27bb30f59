# SPDX-License-Identifier: MIT
"""RKNPU boards: the runtime's RKNN_LOG_LEVEL=4 log of each model is kept in the artifacts
(<board>/<model>/rknn-log-level-4.txt), whichever check fails; no check of its own."""

from __future__ import annotations

from npu_accept.checks.roster import MODELS, ROSTER
from npu_accept.collectors.rknn_log import collect_rknn_logs

COLLECTORS = {"rknpu": collect_rknn_logs}
SERVES = tuple(check.id for check in ROSTER if MODELS in check.needs)  # it runs every model once more

# SPDX-License-Identifier: MIT
"""Collectors: the board I/O behind checks that need more than npu-info and the model runs.

A collector is called by `npu_accept.collect` after the model runs, as
`collector(connection=…, remote_dir=…, facts=…, profile=…, artifacts=…)`, and returns a dict merged
into `BoardFacts.extra`; the check modules name their collectors in `COLLECTORS` and stay pure
functions of the facts.  A collector never raises for a board problem: it records the problem as
one sentence under its key, and the check turns that into its verdict.
"""

# SPDX-License-Identifier: MIT
"""npu-diagnose: the field engineer's first look at what a user has in hand.

`sources` reads and recognises the inputs, `findings` turns their facts into ranked findings,
`cli` is the command.  `kernel_faults` (kernel log wordings per NPU family) and `pairings`
(converter / toolkit ⇄ runtime pairings) are shared with the acceptance suite's checks 8 and 10.
"""

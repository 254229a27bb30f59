# SPDX-License-Identifier: MIT
"""npu-flash: write a meta-npu image to a board with the method its profile names.

One module per concept: `errors` (the one-sentence error), `spec` (the profile's `flash:`
section), `image` (format checks), `checksum` (sha256 and its sidecar), `progress` (tty-aware
bars), `device` (block-device safety), `revision` (i.MX95 boot container vs silicon),
`uuu` / `rkdeveloptool` / `bmaptool` (one flashing method each), `plan` (commands and how they
run) and `cli` (the command line).
"""

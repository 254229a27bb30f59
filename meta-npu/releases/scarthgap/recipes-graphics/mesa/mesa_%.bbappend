# SPDX-License-Identifier: MIT
# scarthgap's mesa_24.0.7.bb (releases/releases.conf adds this file on scarthgap only, in place of
# recipes-runtime/mesa/mesa.bbappend). Same gate: with the NPU feature and the rocket family,
# mesa-teflon.inc stops the parse with one sentence, since this Mesa has no rocket/teflon.
require ${@'recipes-runtime/mesa/mesa-teflon.inc' if d.getVar('NPU_ENABLED') == '1' and d.getVar('NPU_FAMILY') == 'rocket' else ''}

# SPDX-License-Identifier: MIT
# npu-user-model.bbclass: installs a model the user supplies (converted with vendor host tools no
# layer can run) at the path the board's acceptance profile reads, verified by its sha256.
#
# The recipe sets NPU_USER_MODEL (absolute host path), NPU_USER_MODEL_SHA256, NPU_USER_MODEL_TARGET
# (path on the board) and NPU_USER_MODEL_HINT (how to produce and point at it). The family's
# packagegroup adds the package only once the model is set; built without one, the recipe stops
# at do_verify_model with NPU_USER_MODEL_HINT.

NPU_USER_MODEL ?= ""
NPU_USER_MODEL_SHA256 ?= ""
NPU_USER_MODEL_TARGET ?= ""
NPU_USER_MODEL_HINT ?= ""

SRC_URI = "${@'file://' + d.getVar('NPU_USER_MODEL') if d.getVar('NPU_USER_MODEL') else ''}"

S = "${UNPACKDIR}"
# The fetcher copies file:///a/b/m.x to ${UNPACKDIR}/a/b/m.x.
NPU_USER_MODEL_UNPACKED = "${UNPACKDIR}/${@(d.getVar('NPU_USER_MODEL') or '').lstrip('/')}"

inherit allarch npu-model

# The recipe sets NPU_USER_MODEL_INPUTS, the input its model takes.
NPU_USER_MODEL_INPUTS ?= ""
NPU_MODELS = "${NPU_USER_MODEL_TARGET}=${NPU_USER_MODEL_INPUTS}"

# Without a model it cannot build, so `bitbake world` leaves it alone.
EXCLUDE_FROM_WORLD = "1"

do_configure[noexec] = "1"
do_compile[noexec] = "1"

python do_verify_model() {
    import hashlib
    import os
    given = d.getVar('NPU_USER_MODEL')
    if not given or not os.path.isabs(given):
        bb.fatal('%s has no model: %s' % (d.getVar('PN'), d.getVar('NPU_USER_MODEL_HINT')))
    path = d.getVar('NPU_USER_MODEL_UNPACKED')
    expected = (d.getVar('NPU_USER_MODEL_SHA256') or '').strip().lower()
    with open(path, 'rb') as model:
        actual = hashlib.sha256(model.read()).hexdigest()
    if expected != actual:
        bb.fatal('%s has sha256 %s, but the recipe expects "%s": set the sha256 to that of the model '
                 'you mean to ship.' % (given, actual, expected))
}
addtask verify_model after do_unpack before do_install
do_verify_model[vardeps] += "NPU_USER_MODEL NPU_USER_MODEL_SHA256"

do_install() {
    install -d $(dirname ${D}${NPU_USER_MODEL_TARGET})
    install -m 0644 ${NPU_USER_MODEL_UNPACKED} ${D}${NPU_USER_MODEL_TARGET}
}

FILES:${PN} += "${NPU_USER_MODEL_TARGET}"

# SPDX-License-Identifier: MIT
SUMMARY = "The machine's NPU stack: driver, runtime, delegate, daemon, demos, models, tests"
DESCRIPTION = "Selects, by NPU_FAMILY, the packages an image needs to run and accept the \
machine's NPU. Each family's lists are set by a bbappend in the dynamic layer of the vendor \
layer that provides those packages (dynamic-layers/<collection>/recipes-core/packagegroups/)."
LICENSE = "MIT"

PACKAGE_ARCH = "${MACHINE_ARCH}"

inherit packagegroup npu-family

# One variable per role, so a board's bbappend can replace one role without touching others.
NPU_DRIVER_PKGS ?= ""
NPU_RUNTIME_PKGS ?= ""
NPU_DELEGATE_PKGS ?= ""
NPU_DAEMON_PKGS ?= ""
NPU_DEMO_PKGS ?= ""
NPU_MODEL_PKGS ?= ""
NPU_TEST_PKGS ?= "npu-tools"
# Models the user supplies (npu-user-model.bbclass), as "recipe:VARIABLE": the recipe joins the
# image once VARIABLE, the model's host path, is set.
NPU_USER_MODELS ?= ""
NPU_USER_MODEL_PKGS = "${@' '.join(r for r, v in (m.split(':', 1) for m in d.getVar('NPU_USER_MODELS').split()) if d.getVar(v))}"

RDEPENDS:${PN} = " \
    ${NPU_DAEMON_PKGS} \
    ${NPU_DELEGATE_PKGS} \
    ${NPU_DEMO_PKGS} \
    ${NPU_DRIVER_PKGS} \
    ${NPU_MODEL_PKGS} \
    ${NPU_RUNTIME_PKGS} \
    ${NPU_TEST_PKGS} \
    ${NPU_USER_MODEL_PKGS} \
"

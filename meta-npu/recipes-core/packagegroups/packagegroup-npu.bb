SUMMARY = "The machine's NPU stack: driver, runtime, delegate, daemon, demos, models, tests"
DESCRIPTION = "Selects, by NPU_FAMILY, the packages an image needs to run and accept the \
machine's NPU. Family lists for vendor stacks are filled here or by a bbappend in the \
vendor's dynamic layer (dynamic-layers/<collection>/recipes-core/packagegroups/)."
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

# i.MX95 Neutron: package names as in meta-freescale-ml walnascar (e55df3c0) and meta-imx-ml.
# The driver is built into linux-imx (CONFIG_NEUTRON=y), so it has no package of its own; the
# udev rule that opens /dev/neutron0 to the "video" group is its userspace half. "neutron"
# ships libNeutronDriver and NeutronFirmware.elf; "tensorflow-lite" ships libtensorflow-lite,
# the Python bindings (tflite_runtime) and the label_image/benchmark_model examples.
NPU_DRIVER_PKGS:npu-neutron ?= "neutron-udev-rules"
NPU_RUNTIME_PKGS:npu-neutron ?= "neutron tensorflow-lite"
NPU_DELEGATE_PKGS:npu-neutron ?= "tensorflow-lite-neutron-delegate"

RDEPENDS:${PN} = " \
    ${NPU_DAEMON_PKGS} \
    ${NPU_DELEGATE_PKGS} \
    ${NPU_DEMO_PKGS} \
    ${NPU_DRIVER_PKGS} \
    ${NPU_MODEL_PKGS} \
    ${NPU_RUNTIME_PKGS} \
    ${NPU_TEST_PKGS} \
"

# SPDX-License-Identifier: MIT
# i.MX95 Neutron: package names as meta-freescale-ml walnascar (e55df3c0) builds them, and as
# meta-imx's meta-imx-ml builds them under the same names in NXP's BSP (which also carries
# meta-freescale-ml); compare NEUTRON_PKGS:mx95-nxp-bsp in recipes-fsl/packagegroups/
# packagegroup-fsl-ml.bb.
# - driver: built into linux-imx (CONFIG_NEUTRON=y), so no package; neutron-udev-rules opens
#   /dev/neutron0 to the video group.
# - runtime: "neutron" ships libNeutronDriver and the firmware NeutronFirmware.elf;
#   "tensorflow-lite" ships libtensorflow-lite, the Python bindings (tflite_runtime, in the
#   main package: FILES:${PN} += "${libdir}/python*") and the examples label_image and
#   benchmark_model (${bindir}/tensorflow-lite-<PV>/examples).
# - delegate: "tensorflow-lite-neutron-delegate" ships /usr/lib/libneutron_delegate.so.
NPU_DRIVER_PKGS:npu-neutron ?= "neutron-udev-rules"
NPU_RUNTIME_PKGS:npu-neutron ?= "neutron tensorflow-lite"
NPU_DELEGATE_PKGS:npu-neutron ?= "tensorflow-lite-neutron-delegate"
# - models: the Neutron-converted model exists only once the user supplied one (neutron-converter is
#   proprietary host software); the unconverted reference ships with tensorflow-lite's examples.
NPU_USER_MODELS:npu-neutron ?= "npu-model-neutron:NPU_NEUTRON_MODEL"

# nooelint: oelint.var.mandatoryvar.HOMEPAGE
# A one-line rule written for this layer; there is no upstream project or home page.
# SPDX-License-Identifier: MIT
SUMMARY = "udev rule that opens the i.MX95 Neutron NPU device to the video group"
DESCRIPTION = "Installs 70-neutron.rules: /dev/neutron<N>, created root-only by NXP's \
Neutron driver, becomes group video, mode 0660, so NPU users need not be root."
LICENSE = "MIT"
# nooelint: oelint.var.licenseremotefile
LIC_FILES_CHKSUM = "file://${COMMON_LICENSE_DIR}/MIT;md5=0835ade698e0bcf8506ecda2f7b4f302"

SRC_URI = "file://70-neutron.rules"

S = "${UNPACKDIR}"

inherit allarch

do_configure[noexec] = "1"
do_compile[noexec] = "1"

do_install() {
    install -d ${D}${nonarch_base_libdir}/udev/rules.d
    install -m 0644 ${S}/70-neutron.rules ${D}${nonarch_base_libdir}/udev/rules.d/
}

RDEPENDS:${PN} = "udev"

# SPDX-License-Identifier: MIT
SUMMARY = "Sophgo CV18xx TPU kernel driver with the cvi sys/base modules it runs beside"
DESCRIPTION = "Out-of-tree kernel modules from sophgo/osdrv interdrv/: <chip>_tpu.ko \
(platform driver \"cvi-tpu\", compatible \"cvitek,tpu\", /dev/cvi-tpu0, /proc/tpu/usage_profiling), \
<chip>_base.ko (/dev/cvi-base; prints \"CVITEK CHIP ID = N\" at probe, the chip id npu-info reads) \
and <chip>_sys.ko, whose symbols <chip>_base.ko links against. <chip> is cv181x for SG2002/SG2000 \
(Milk-V Duo 256M, Duo S) and cv180x for CV1800B (Milk-V Duo)."
HOMEPAGE = "https://github.com/sophgo/osdrv"
# No licence file: the TPU driver's header grants GPL-2.0-or-later, and all three modules declare
# MODULE_LICENSE("GPL").
LICENSE = "GPL-2.0-or-later"
LIC_FILES_CHKSUM = " \
    file://interdrv/tpu/common/cvi_tpu_interface.c;beginline=1;endline=12;md5=d80b136c443765b8ac342dd2dcba24c2 \
    file://interdrv/tpu/common/cvi_tpu_interface.c;beginline=1328;endline=1328;md5=787eb329e3eac3e58f47744d2cf33699 \
"

PV = "2024.10.14+git"

# sophgo/osdrv, branch sg200x-dev ("osdrv: weekly rls 2024.10.14"), read from the repository.
SRC_URI = "git://github.com/sophgo/osdrv.git;protocol=https;branch=sg200x-dev;destsuffix=${BP}"
SRCREV = "28215f2d37b108de7a29ed26006878135749c886"

S = "${UNPACKDIR}/${BP}"

inherit module

# The modules include <linux/streamline_annotate.h> and drivers/staging/android/ion/ion.h,
# which only the vendor 5.10 kernel has (ION left mainline in 5.11); meta-riscv packages that
# kernel as linux-milkv-duo-dev. Any other kernel cannot build them, so say so at parse time.
CVI_TPU_KERNEL = "linux-milkv-duo-dev"
# nooelint: oelint.task.noanonpython - the kernel provider is known only at parse time
python __anonymous() {
    provider = d.getVar('PREFERRED_PROVIDER_virtual/kernel') or ''
    wanted = d.getVar('CVI_TPU_KERNEL')
    if provider != wanted:
        raise bb.parse.SkipRecipe(
            'the CV18xx TPU driver builds only against the vendor kernel %s (ION, streamline '
            'annotations); set PREFERRED_PROVIDER_virtual/kernel = "%s" (kernel now: "%s").'
            % (wanted, wanted, provider))
}

# Chip family of the SoC, as osdrv's Makefiles spell it (CVIARCH upper case, CVIARCH_L lower).
# milkv-duo256m.conf adds "milkv-duo" to MACHINEOVERRIDES, and its own
# machine name overrides it.
CVI_CHIP = "cv180x"
CVI_CHIP:milkv-duo256m = "cv181x"

# Build order matters: base links against sys's exported symbols (base/Makefile
# KBUILD_EXTRA_SYMBOLS += $(PWD)/../sys/Module.symvers).
CVI_TPU_DRIVERS = "sys base tpu"

do_compile() {
    unset CFLAGS CPPFLAGS CXXFLAGS LDFLAGS
    chip_upper=$(echo ${CVI_CHIP} | tr a-z A-Z)
    for drv in ${CVI_TPU_DRIVERS}; do
        # The osdrv Makefiles find their includes through $(PWD) (../Makefile.interdrv.param,
        # ../sys/Module.symvers): run from the driver dir and pass PWD, as Buildroot's
        # kernel-module infrastructure does.
        cd ${S}/interdrv/$drv
        oe_runmake -C ${STAGING_KERNEL_DIR} O=${STAGING_KERNEL_BUILDDIR} M=${S}/interdrv/$drv \
            PWD=${S}/interdrv/$drv \
            CC="${KERNEL_CC}" LD="${KERNEL_LD}" AR="${KERNEL_AR}" OBJCOPY="${KERNEL_OBJCOPY}" \
            CVIARCH=$chip_upper CVIARCH_L=${CVI_CHIP} modules
    done
}

do_install() {
    install -d ${D}${nonarch_base_libdir}/modules/${KERNEL_VERSION}/extra
    for drv in ${CVI_TPU_DRIVERS}; do
        install -m 0644 ${S}/interdrv/$drv/${CVI_CHIP}_$drv.ko \
            ${D}${nonarch_base_libdir}/modules/${KERNEL_VERSION}/extra/
    done
}

# modprobe resolves base -> sys from modules.dep; tpu needs neither, but the chip id that
# npu-info reports is printed by base, so all three load at boot.
KERNEL_MODULE_AUTOLOAD += "${CVI_CHIP}_sys ${CVI_CHIP}_base ${CVI_CHIP}_tpu"

PACKAGE_ARCH = "${MACHINE_ARCH}"
# milkv-duo: the vendor kernel's own CV1800B tree has the TPU node and ION. milkv-duo256m: meta-npu's
# kernel append makes the kernel an SG2002 one with a TPU/ION board tree. milkv-duos (SG2000) is
# left out: meta-riscv builds its kernel as a CV1800B and no SG2000 board tree is provided, so
# cv181x modules would not match that kernel.
COMPATIBLE_MACHINE = "^milkv-(duo|duo256m)$"


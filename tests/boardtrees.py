# SPDX-License-Identifier: MIT
"""Minimal base device trees of the boards, written here from the upstream trees (nothing vendor-
written is committed): only the nodes, labels, addresses and cell sizes meta-npu's fragments touch.
Each tree names the upstream file and commit its values were read from (docs/PROVENANCE.md).
"""

from __future__ import annotations

# Rockchip BSP 6.1 SRAM users and NPU nodes. RK3588: rk3588s.dtsi (system_sram2 at 0xff001000,
# 0xef000, shared by rkvdec0/rkvdec1); RK3576: rk3576.dtsi (sram at 0x3ff88000, 0x78000, given to
# rkvdec), as read in armbian/linux-rockchip (rk3576.dtsi at 079e6be1). system_sram2's address,
# size and ranges are also those of mainline rk3588s.dtsi.
RK3588_SOC = """
/ {
\t#address-cells = <2>;
\t#size-cells = <2>;

\tsystem_sram2: sram@ff001000 {
\t\tcompatible = "mmio-sram";
\t\treg = <0x0 0xff001000 0x0 0xef000>;
\t\t#address-cells = <1>;
\t\t#size-cells = <1>;
\t\tranges = <0x0 0x0 0xff001000 0xef000>;

\t\trkvdec0_sram: rkvdec-sram@0 {
\t\t\treg = <0x0 0x78000>;
\t\t};

\t\trkvdec1_sram: rkvdec-sram@78000 {
\t\t\treg = <0x78000 0x77000>;
\t\t};
\t};

\trkvdec0: rkvdec-core@fdc38000 {
\t\tcompatible = "rockchip,rkv-decoder-v2";
\t\treg = <0x0 0xfdc38100 0x0 0x400>, <0x0 0xfdc38000 0x0 0x100>;
\t\trockchip,sram = <&rkvdec0_sram>;
\t\trockchip,rcb-iova = <0xFFF00000 0x100000>;
\t\trockchip,rcb-info = <136 24576>, <137 49152>;
\t};

\trkvdec1: rkvdec-core@fdc48000 {
\t\tcompatible = "rockchip,rkv-decoder-v2";
\t\treg = <0x0 0xfdc48100 0x0 0x400>, <0x0 0xfdc48000 0x0 0x100>;
\t\trockchip,sram = <&rkvdec1_sram>;
\t\trockchip,rcb-iova = <0xFFE00000 0x100000>;
\t\trockchip,rcb-info = <136 24576>, <137 49152>;
\t};

\trknpu: npu@fdab0000 {
\t\tcompatible = "rockchip,rk3588-rknpu";
\t\tstatus = "disabled";
\t};
};
"""

RK3576_SOC = """
/ {
\t#address-cells = <2>;
\t#size-cells = <2>;

\tsram: sram@3ff88000 {
\t\tcompatible = "mmio-sram";
\t\treg = <0x0 0x3ff88000 0x0 0x78000>;
\t\t#address-cells = <1>;
\t\t#size-cells = <1>;
\t\tranges = <0x0 0x0 0x3ff88000 0x78000>;

\t\trkvdec_sram: rkvdec-sram@0 {
\t\t\treg = <0x0 0x78000>;
\t\t};
\t};

\trkvdec: rkvdec@27b00100 {
\t\tcompatible = "rockchip,rkv-decoder-rk3576", "rockchip,rkv-decoder-v383";
\t\treg = <0x0 0x27b00100 0x0 0x600>, <0x0 0x27b00000 0x0 0x100>;
\t\trockchip,sram = <&rkvdec_sram>;
\t\trockchip,rcb-iova = <0x10000000 0x78000>;
\t};

\trknpu: npu@27700000 {
\t\tcompatible = "rockchip,rk3576-rknpu";
\t\tstatus = "disabled";
\t};
};
"""


# i.MX95 19x19 Verdin EVK on NXP's BSP kernel (nxp-imx/linux-imx):
# - imx95.dtsi at 97bf30a802c6: root and /soc with #address-cells = #size-cells = 2, /soc a
#   simple-bus with ranges; neutron: imx95-neutron@4ab00004, compatible "fsl,imx95-neutron",
#   reg <0x0 0x4ab00004 0x0 0x400>, beside neutron_core: imx95-neutron-remoteproc@4ab00000.
# - imx95-19x19-evk.dts at d1cc00a06127: memory@80000000 reg <0x0 0x80000000 0 0x80000000>;
#   reserved-memory (2/2 cells, ranges) with linux,cma (reusable, 0x3c000000 in
#   <0 0x80000000 0 0x7f000000>).
# - imx95-19x19-verdin.dts at 3849b319989f: #include "imx95-19x19-evk.dts".
IMX95_DTSI = """
/ {
	#address-cells = <2>;
	#size-cells = <2>;

	soc {
		compatible = "simple-bus";
		#address-cells = <2>;
		#size-cells = <2>;
		ranges;

		neutron_core: imx95-neutron-remoteproc@4ab00000 {
			compatible = "fsl,imx95-neutron-rproc";
			reg = <0x0 0x4ab00000 0x0 0x4>;
		};

		neutron: imx95-neutron@4ab00004 {
			compatible = "fsl,imx95-neutron";
			reg = <0x0 0x4ab00004 0x0 0x400>;
			fsl,neutron-rproc = <&neutron_core>;
		};
	};
};
"""

IMX95_EVK_DTS = """/dts-v1/;

#include "imx95.dtsi"

/ {
	memory@80000000 {
		device_type = "memory";
		reg = <0x0 0x80000000 0 0x80000000>;
	};

	reserved-memory {
		#address-cells = <2>;
		#size-cells = <2>;
		ranges;

		linux_cma: linux,cma {
			compatible = "shared-dma-pool";
			alloc-ranges = <0 0x80000000 0 0x7f000000>;
			size = <0 0x3c000000>;
			linux,cma-default;
			reusable;
		};
	};
};
"""

IMX95_VERDIN_DTS = """#include "imx95-19x19-evk.dts"
"""

# The files a kernel tree holds for the i.MX95 Verdin, under arch/arm64/boot/dts/freescale/.
IMX95_VERDIN_TREE = {
    "imx95.dtsi": IMX95_DTSI,
    "imx95-19x19-evk.dts": IMX95_EVK_DTS,
    "imx95-19x19-verdin.dts": IMX95_VERDIN_DTS,
}


# Milk-V Duo 256M (SG2002): stand-ins for the SoC trees of milkv-duo/duo-buildroot-sdk-v2
# (build/boards/default/dts: cv181x/cv181x_base.dtsi read at c5adb094 for the TPU node,
# cv181x_riscv/cv181x_base_riscv.dtsi at 824f3ac2 for its PLIC interrupts), with the node names
# and labels the board tree relies on, and the memory-map header meta-riscv's U-Boot generates.
# The lines of cvi_board_memmap.h that meta-riscv's mmap_conv.py generates from that memmap.py
# (run on meta-riscv 91a2c3df's files; the full header has more, unused here).
MEMMAP_H = """#define CVIMMAP_FRAMEBUFFER_ADDR 0x8b13e000  /* offset 177.2421875MiB */
#define CVIMMAP_FRAMEBUFFER_SIZE 0x1c2000  /* 1.7578125MiB */
#define CVIMMAP_FREERTOS_ADDR 0x8fe00000  /* offset 254.0MiB */
#define CVIMMAP_FREERTOS_RESERVED_ION_SIZE 0x1600000  /* 22.0MiB */
#define CVIMMAP_FREERTOS_SIZE 0x200000  /* 2.0MiB */
#define CVIMMAP_ION_ADDR 0x8b300000  /* offset 179.0MiB */
#define CVIMMAP_ION_SIZE 0x4b00000  /* 75.0MiB */
#define CVIMMAP_KERNEL_MEMORY_ADDR 0x80000000  /* offset 0.0KiB */
#define CVIMMAP_KERNEL_MEMORY_SIZE 0xfe00000  /* 254.0MiB */
#define CVIMMAP_MONITOR_ADDR 0x80000000  /* offset 0.0KiB */
#define CVIMMAP_OPENSBI_SIZE 0x80000  /* 512.0KiB */
"""

# Stand-in for the SDK's cv181x_base_riscv.dtsi (+ cv181x_base.dtsi): only what the board tree
# relies on, named as there.
SOC_STUB = """#include "cvi_board_memmap.h"
/memreserve/ CVIMMAP_MONITOR_ADDR CVIMMAP_OPENSBI_SIZE;
/ {
	compatible = "cvitek,cv181x";
	#address-cells = <2>;
	#size-cells = <2>;
	clk: clock-controller {
		#clock-cells = <1>;
	};
	rst: reset-controller {
		#reset-cells = <1>;
	};
	plic0: interrupt-controller@70000000 {
		reg = <0x0 0x70000000 0x0 0x4000000>;
		interrupt-controller;
		#interrupt-cells = <2>;
		#address-cells = <0>;
	};
	TPU_NODE
	cvitek-ion {
		compatible = "cvitek,cvitek-ion";
		heap_carveout@0 {
			compatible = "cvitek,carveout";
			memory-region = <&ion_reserved>;
		};
	};
	emmc: cv-emmc@4300000 {
		reg = <0x0 0x4300000 0x0 0x1000>;
	};
	spinand: cv-spinf@4060000 {
		reg = <0x0 0x4060000 0x0 0x1000>;
	};
};
"""
TPU_NODE = """tpu {
		compatible = "cvitek,tpu";
		reg = <0x0 0x0c100000 0x0 0x1000>, <0x0 0x0c101000 0x0 0x1000>;
		clocks = <&clk 15>, <&clk 16>;
		resets = <&rst 7>, <&rst 8>, <&rst 9>;
		interrupts = <75 4>, <76 4>;
		interrupt-parent = <&plic0>;
	};"""
SD_STUB = "/ {\n\t/delete-node/ cv-emmc@4300000;\n\t/delete-node/ cv-spinf@4060000;\n};\n"

# What the kernel recipe's do_configure puts beside the board tree (arch/riscv/boot/dts/cvitek/).
CV181X_BOARD_STUBS = {
    "sg2002/cv181x_base_riscv.dtsi": SOC_STUB.replace("TPU_NODE", TPU_NODE),
    "sg2002/cv181x_asic_qfn.dtsi": "",
    "sg2002/cv181x_asic_sd.dtsi": SD_STUB,
    "sg2002/cvi_board_memmap.h": MEMMAP_H,
}

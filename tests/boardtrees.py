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

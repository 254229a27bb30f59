# SPDX-License-Identifier: MIT
# npu-base.bbclass: the configuration-wide part of meta-npu, inherited only with the NPU feature
# (conf/layer.conf): NPU_FAMILY and its checks (from the family descriptor
# recipes-tools/npu-tools/files/npu_target/families.py, which npu-info and the suite read too,
# through lib/npu_layer, which conf/layer.conf registers with addpylib), the build manifest's
# recipes and their pkgdata export, and the NXP EULA guard.

NPU_FAMILY_DEFAULT ?= "none"
# i.MX95 with NXP's BSP kernel (linux-imx carries drivers/staging/neutron); meta-freescale's
# imx-base.inc adds mx95-nxp-bsp to MACHINEOVERRIDES when IMX_DEFAULT_BSP = "nxp", which
# imx95-evk.inc sets (meta-freescale walnascar 0e1c23ee).
NPU_FAMILY_DEFAULT:mx95-nxp-bsp ?= "neutron"
NPU_FAMILY ??= "${NPU_FAMILY_DEFAULT}"

# Recipes behind each role of the build manifest, one flag per family of the family descriptor
# (which holds the same table, npu_layer.families.manifest_flags(); tests/test_families.py keeps
# the two equal: task signatures follow these variables, not a file that Python reads). The kernel
# is always PREFERRED_PROVIDER_virtual/kernel. Empty means the family has no such part. A
# distro or local.conf may set its own flag (e.g. NPU_RUNTIME_RECIPE[rknpu] = "my-librknnrt").
# Neutron: the driver is built into linux-imx (CONFIG_NEUTRON=y), so the driver recipe is the
# kernel; NPU_DRIVER_VERSION is the driver's MODULE_VERSION, what it reports at run time in
# /sys/module/neutron/version (design.md, "Build manifest").
NPU_DRIVER_RECIPE[neutron] ?= "${PREFERRED_PROVIDER_virtual/kernel}"
NPU_DRIVER_VERSION[neutron] ?= "1.0"
NPU_RUNTIME_RECIPE[neutron] ?= "neutron"
NPU_DELEGATE_RECIPE[neutron] ?= "tensorflow-lite-neutron-delegate"
NPU_DAEMON_RECIPE[neutron] ?= ""
# rknpu: the driver is built into the BSP kernel (rknpu.cfg); its run-time version is not
# recorded (the BSP kernel tree could not be read to confirm it).
NPU_DRIVER_RECIPE[rknpu] ?= "${PREFERRED_PROVIDER_virtual/kernel}"
NPU_DRIVER_VERSION[rknpu] ?= ""
NPU_RUNTIME_RECIPE[rknpu] ?= "librknnrt"
NPU_DELEGATE_RECIPE[rknpu] ?= ""
NPU_DAEMON_RECIPE[rknpu] ?= "rknn-server"
# rocket: the in-tree driver (rocket.cfg) has no version of its own; the kernel's stands for it.
NPU_DRIVER_RECIPE[rocket] ?= "${PREFERRED_PROVIDER_virtual/kernel}"
NPU_DRIVER_VERSION[rocket] ?= ""
NPU_RUNTIME_RECIPE[rocket] ?= "python3-tensorflow-lite"
NPU_DELEGATE_RECIPE[rocket] ?= "mesa"
NPU_DAEMON_RECIPE[rocket] ?= ""
# cvitek-tpu: the out-of-tree cvi-tpu module, which exposes no version, and cviruntime.
NPU_DRIVER_RECIPE[cvitek-tpu] ?= "cvitek-tpu"
NPU_DRIVER_VERSION[cvitek-tpu] ?= ""
NPU_RUNTIME_RECIPE[cvitek-tpu] ?= "cviruntime"
NPU_DELEGATE_RECIPE[cvitek-tpu] ?= ""
NPU_DAEMON_RECIPE[cvitek-tpu] ?= ""

def npu_role_recipe(role, d):
    """The recipe that plays ROLE (driver, runtime, delegate, daemon) for NPU_FAMILY."""
    return d.getVarFlag('NPU_%s_RECIPE' % role.upper(), d.getVar('NPU_FAMILY')) or ''
# BitBake's code parser cannot see a variable whose name is computed, so the variables are named
# here: with them (and, through BB_SIGNATURE_EXCLUDE_FLAGS, every family's flag of them) in the
# dependencies, the signature of every task that asks for a role (the image's do_rootfs through
# npu_write_manifest, NPU_ROLE_RECIPES) changes when a role's recipe does.
# nooelint: oelint.vars.mispell.unknown
npu_role_recipe[vardeps] = "NPU_DRIVER_RECIPE NPU_RUNTIME_RECIPE NPU_DELEGATE_RECIPE NPU_DAEMON_RECIPE"

def npu_manifest_recipes(d):
    """Every recipe whose version and SRCREV the build manifest records."""
    names = [d.getVar('PREFERRED_PROVIDER_virtual/kernel') or '']
    names += [npu_role_recipe(r, d) for r in ('driver', 'runtime', 'delegate', 'daemon')]
    return sorted({n for n in names if n})

def npu_primary_srcrev(d):
    """Full SRCREV of the first git source in SRC_URI, or '' when the recipe has none."""
    for uri in (d.getVar('SRC_URI') or '').split():
        scheme = uri.split('://', 1)[0]
        if scheme not in ('git', 'gitsm'):
            continue
        params = dict(p.split('=', 1) for p in uri.split(';')[1:] if '=' in p)
        name = params.get('name', 'default')
        rev = d.getVar('SRCREV_%s' % name) if name != 'default' else None
        rev = rev or d.getVar('SRCREV') or ''
        return rev if len(rev) == 40 else ''
    return ''

# What the build manifest records, as one visible variable (scripts/image-facts reads it).
NPU_ROLE_RECIPES = "${@' '.join(npu_manifest_recipes(d))}"

# What the manifest calls the version: the kernel's upstream version for a kernel, else PV.
NPU_SRCREV = "${@npu_primary_srcrev(d)}"
NPU_VERSION = "${@d.getVar('LINUX_VERSION') or d.getVar('PV')}"

# Anonymous python, not a plain assignment: a ${@...} expression in PKGDATA_VARS would add
# NPU_ENABLED and the manifest recipes to every recipe's dependencies; this only touches the
# few manifest recipes, and only with the integration on.
# nooelint: oelint.task.noanonpython
python __anonymous() {
    if d.getVar('NPU_ENABLED') != '1':
        return
    if d.getVar('PN') not in npu_manifest_recipes(d):
        return
    # emit_pkgdata writes every PKGDATA_VARS variable into pkgdata/runtime/<pkg>, where the
    # image's npu-manifest.bbclass reads it with oe.packagedata.read_subpkgdata_dict().
    d.appendVar('PKGDATA_VARS', ' NPU_SRCREV NPU_VERSION')
    d.appendVarFlag('do_package', 'vardeps', ' NPU_SRCREV NPU_VERSION')
}

def npu_families(d):
    """The family records, read by meta-npu/lib/npu_layer/families.py (registered by addpylib)."""
    try:
        import npu_layer.families
    except ImportError:
        bb.fatal('The Python library of meta-npu (lib/npu_layer) is not importable: the addpylib '
                 'line of meta-npu/conf/layer.conf registers it, so add meta-npu to BBLAYERS '
                 'instead of reaching its classes through BBPATH alone.')
    try:
        npu_layer.families.descriptor()
    except npu_layer.families.DescriptorError as error:
        bb.fatal(str(error))
    return npu_layer.families

python npu_config_check() {
    library = npu_families(e.data)
    family = e.data.getVar('NPU_FAMILY')
    known = list(library.names())
    if family not in known:
        bb.fatal('NPU_FAMILY = "%s" is not a known NPU family: set NPU_FAMILY to one of %s.'
                 % (family, ', '.join(known)))
    # A family this class sets no flags for (one added by its record alone: docs/design.md,
    # "Adding an NPU family") takes its manifest roles from its record, as values in the
    # configuration, which task signatures follow like the flags above.
    for var, table in library.manifest_flags().items():
        if family in table and e.data.getVarFlag(var, family, False) is None:
            e.data.setVarFlag(var, family, table[family])
}
addhandler npu_config_check
npu_config_check[eventmask] = "bb.event.ConfigParsed"

# The layers (BBFILE_COLLECTIONS names) a family's packages come from are checked with the
# integration on, so a missing vendor layer is one sentence when the build starts, not a build
# that fails on "Nothing RPROVIDES" later. The check runs when a build starts: by then every ConfigParsed handler has run, among
# them meta-freescale's machine-overrides-extender, which adds the mx95-nxp-bsp override that
# NPU_FAMILY's default depends on.
python npu_family_layers_check() {
    if e.data.getVar('NPU_ENABLED') != '1':
        return
    family = e.data.getVar('NPU_FAMILY')
    present = (e.data.getVar('BBFILE_COLLECTIONS') or '').split()
    described = npu_families(e.data).family(family)
    missing = [c.replace('|', ' or ') for c in (described.layers if described else ())
               if not any(a in present for a in c.split('|'))]
    if missing:
        bb.fatal('NPU_FAMILY "%s" needs the layer collection(s) %s, which are not in BBLAYERS: '
                 'add the vendor layer(s) to your kas file or bblayers.conf.'
                 % (family, ', '.join(missing)))
}
addhandler npu_family_layers_check
npu_family_layers_check[eventmask] = "bb.event.BuildStarted"

# ACCEPT_FSL_EULA must come from the user. fsl-eula-unpack fails only in the first EULA recipe's
# do_unpack, deep into a build; this stops an NPU build on NXP's BSP (the imx-nxp-bsp override, or
# a meta-imx layer) before any task runs, and at BuildStarted, so `bitbake -p` still parses.
NPU_EULA_KAS_HINT ?= "kas build kas/imx95-verdin.yml:kas/opt/accept-fsl-eula.yml"
NPU_IMX_COLLECTIONS = "fsl-bsp-release imx-machine-learning fsl-sdk-release"

python npu_eula_guard() {
    data = e.data
    if data.getVar('NPU_ENABLED') != '1' or data.getVar('ACCEPT_FSL_EULA') == '1':
        return
    collections = (data.getVar('BBFILE_COLLECTIONS') or '').split()
    overrides = (data.getVar('MACHINEOVERRIDES') or '').split(':')
    uses_nxp_bsp = 'imx-nxp-bsp' in overrides or any(
        c in collections for c in data.getVar('NPU_IMX_COLLECTIONS').split())
    if not uses_nxp_bsp:
        return
    bb.fatal('This build uses NXP software under the NXP EULA, a legal agreement you must read '
             'and accept yourself (meta-freescale/EULA), so meta-npu does not accept it for you: '
             'if you accept it, build with the opt-in fragment, as in "%s" (or set '
             'ACCEPT_FSL_EULA = "1" in local.conf).' % data.getVar('NPU_EULA_KAS_HINT'))
}
addhandler npu_eula_guard
npu_eula_guard[eventmask] = "bb.event.BuildStarted"

# SPDX-License-Identifier: MIT
# npu-manifest.bbclass: writes the image's build manifest (docs/design.md, "Build manifest") at
# do_rootfs time. The rootfs datastore holds no other recipe's variables, so the role recipes'
# version and SRCREV come back through pkgdata (npu-base.bbclass adds them to PKGDATA_VARS).

NPU_MANIFEST_PATH ?= "${datadir}/meta-npu/build-manifest.json"
NPU_MODELS_DIR ?= "${datadir}/npu-models"

# The manifest records the recipes npu-base.bbclass chooses, and npu-base is inherited only with
# the NPU feature: without it an NPU image has nothing to hold, so it is skipped (with the fix in
# the reason) instead of failing every parse of a build that merely has the layer.
# nooelint: oelint.task.noanonpython
python __anonymous() {
    if d.getVar('NPU_ENABLED') != '1':
        raise bb.parse.SkipRecipe('%s needs the NPU feature: add "npu" to MACHINE_FEATURES or '
                                  'DISTRO_FEATURES (the kas files of meta-npu do)' % d.getVar('PN'))
}

def npu_manifest_packagedata_deps(d):
    if d.getVar('NPU_ENABLED') != '1':
        return ''
    return ' '.join('%s:do_packagedata' % r for r in npu_manifest_recipes(d))

do_rootfs[depends] += "${@npu_manifest_packagedata_deps(d)}"
do_rootfs[vardeps] += "NPU_FAMILY NPU_MANIFEST_PATH NPU_MODELS_DIR"

def npu_recipe_record(pn, d, version=None):
    """{"recipe", "version", "srcrev"} of PN as its pkgdata records it, or None without PN."""
    import oe.packagedata
    if not pn:
        return None
    if not oe.packagedata.has_pkgdata(pn, d):
        bb.fatal('npu-manifest: %s has no pkgdata; the image must depend on %s:do_packagedata.'
                 % (pn, pn))
    facts = {}
    for pkg in oe.packagedata.read_pkgdata(pn, d).get('PACKAGES', '').split():
        facts = oe.packagedata.read_subpkgdata_dict(pkg, d)
        if facts:
            break
    return {
        'recipe': pn,
        'version': version or facts.get('NPU_VERSION') or facts.get('PV'),
        'srcrev': facts.get('NPU_SRCREV') or None,
    }

def npu_model_records(rootfs, models_dir):
    import hashlib
    import os
    records = []
    top = os.path.join(rootfs, models_dir.lstrip('/'))
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames.sort()
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            if os.path.islink(path) or not os.path.isfile(path):
                continue
            digest = hashlib.sha256()
            with open(path, 'rb') as f:
                for block in iter(lambda: f.read(1 << 20), b''):
                    digest.update(block)
            records.append({'path': '/' + os.path.relpath(path, rootfs),
                            'sha256': digest.hexdigest()})
    return records

python npu_write_manifest() {
    import json
    import os

    family = d.getVar('NPU_FAMILY')
    kernel = d.getVar('PREFERRED_PROVIDER_virtual/kernel')
    driver_version = d.getVarFlag('NPU_DRIVER_VERSION', family) or None
    manifest = {
        'schema': 'npu-build-manifest/1',
        'npu_family': family,
        'machine': d.getVar('MACHINE'),
        'distro': d.getVar('DISTRO'),
        'image': d.getVar('PN'),
        'kernel': npu_recipe_record(kernel, d),
        'driver': npu_recipe_record(npu_role_recipe('driver', d), d, driver_version),
        'runtime': npu_recipe_record(npu_role_recipe('runtime', d), d),
        'delegate': npu_recipe_record(npu_role_recipe('delegate', d), d),
        'daemon': npu_recipe_record(npu_role_recipe('daemon', d), d),
        'models': npu_model_records(d.getVar('IMAGE_ROOTFS'), d.getVar('NPU_MODELS_DIR')),
    }
    path = os.path.join(d.getVar('IMAGE_ROOTFS'), d.getVar('NPU_MANIFEST_PATH').lstrip('/'))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'w') as f:
        json.dump(manifest, f, indent=2, sort_keys=True)
        f.write('\n')
    bb.note('npu-manifest: wrote %s' % path)
}

ROOTFS_POSTPROCESS_COMMAND += "npu_write_manifest"
# The driver version's flag is read with a computed name (NPU_FAMILY's), which BitBake's code
# parser cannot follow: named here, every family's flag of it is in do_rootfs's signature.
npu_write_manifest[vardeps] += "NPU_DRIVER_VERSION"

################################################################################
#
# python-ai-edge-litert
#
################################################################################

# The version of the acceptance suite's own host tests (pyproject.toml dev extra).
PYTHON_AI_EDGE_LITERT_VERSION = 2.3.0
# LiteRT publishes one aarch64 wheel per CPython; the one for this Buildroot's python3 is used
# (2025.02.x: 3.12; 2026.02.x and 2026.05.x: 3.14). URLs and sha256 as PyPI gives them to pip
# (`pip install --dry-run --report` with --platform manylinux_2_27_aarch64 --python-version X.Y).
PYTHON_AI_EDGE_LITERT_WHEEL_PYTHONS = 3.12 3.13 3.14
PYTHON_AI_EDGE_LITERT_SITE_3.12 = https://files.pythonhosted.org/packages/77/89/2bdb0260c4182358c0948316109a3850c37aa15b87665f4b12fb51ea706c
PYTHON_AI_EDGE_LITERT_SITE_3.13 = https://files.pythonhosted.org/packages/b2/ad/234674ab4781ff1822c26794488b5640512bc61011a6b3490bfecdc46aa1
PYTHON_AI_EDGE_LITERT_SITE_3.14 = https://files.pythonhosted.org/packages/3b/16/49b1997efd47ac188c8eb23473c328ad9e2ddb4dd1f14bb44628074aa169
PYTHON_AI_EDGE_LITERT_CPYTHON = cp$(subst .,,$(PYTHON3_VERSION_MAJOR))
PYTHON_AI_EDGE_LITERT_SOURCE = ai_edge_litert-$(PYTHON_AI_EDGE_LITERT_VERSION)-$(PYTHON_AI_EDGE_LITERT_CPYTHON)-$(PYTHON_AI_EDGE_LITERT_CPYTHON)-manylinux_2_27_aarch64.whl
PYTHON_AI_EDGE_LITERT_SITE = $(PYTHON_AI_EDGE_LITERT_SITE_$(PYTHON3_VERSION_MAJOR))
PYTHON_AI_EDGE_LITERT_LICENSE = Apache-2.0
PYTHON_AI_EDGE_LITERT_LICENSE_FILES = \
	ai_edge_litert-$(PYTHON_AI_EDGE_LITERT_VERSION).dist-info/licenses/LICENSE
PYTHON_AI_EDGE_LITERT_DEPENDENCIES = python3

# A wheel is a zip archive: unpack it as is.
define PYTHON_AI_EDGE_LITERT_EXTRACT_CMDS
	unzip -q -o $(PYTHON_AI_EDGE_LITERT_DL_DIR)/$(PYTHON_AI_EDGE_LITERT_SOURCE) -d $(@D)
endef

PYTHON_AI_EDGE_LITERT_SITE_PACKAGES = $(TARGET_DIR)/usr/lib/python$(PYTHON3_VERSION_MAJOR)/site-packages

define PYTHON_AI_EDGE_LITERT_INSTALL_TARGET_CMDS
	mkdir -p $(PYTHON_AI_EDGE_LITERT_SITE_PACKAGES)
	cp -R $(@D)/ai_edge_litert \
		$(@D)/ai_edge_litert-$(PYTHON_AI_EDGE_LITERT_VERSION).dist-info \
		$(PYTHON_AI_EDGE_LITERT_SITE_PACKAGES)/
endef

# The wheels' extension modules are built for one CPython each: refuse one without a wheel.
ifeq ($(BR_BUILDING)$(BR2_PACKAGE_PYTHON_AI_EDGE_LITERT),yy)
ifeq ($(filter $(PYTHON3_VERSION_MAJOR),$(PYTHON_AI_EDGE_LITERT_WHEEL_PYTHONS)),)
$(error python-ai-edge-litert $(PYTHON_AI_EDGE_LITERT_VERSION) has wheels for CPython $(PYTHON_AI_EDGE_LITERT_WHEEL_PYTHONS) only, but this Buildroot's python3 is $(PYTHON3_VERSION_MAJOR): use Buildroot 2025.02.x, 2026.02.x or 2026.05.x)
endif
endif

$(eval $(generic-package))

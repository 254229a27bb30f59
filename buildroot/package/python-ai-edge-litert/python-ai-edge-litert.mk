################################################################################
#
# python-ai-edge-litert
#
################################################################################

# The version of the acceptance suite's own host tests (pyproject.toml dev extra).
PYTHON_AI_EDGE_LITERT_VERSION = 2.3.0
PYTHON_AI_EDGE_LITERT_WHEEL_PYTHON = 3.12
PYTHON_AI_EDGE_LITERT_SOURCE = ai_edge_litert-$(PYTHON_AI_EDGE_LITERT_VERSION)-cp312-cp312-manylinux_2_27_aarch64.whl
PYTHON_AI_EDGE_LITERT_SITE = https://files.pythonhosted.org/packages/77/89/2bdb0260c4182358c0948316109a3850c37aa15b87665f4b12fb51ea706c
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

# The wheel's extension modules are built for one CPython: refuse another one at make time.
ifeq ($(BR_BUILDING)$(BR2_PACKAGE_PYTHON_AI_EDGE_LITERT),yy)
ifneq ($(PYTHON3_VERSION_MAJOR),$(PYTHON_AI_EDGE_LITERT_WHEEL_PYTHON))
$(error python-ai-edge-litert installs a CPython $(PYTHON_AI_EDGE_LITERT_WHEEL_PYTHON) wheel but this Buildroot's python3 is $(PYTHON3_VERSION_MAJOR): use Buildroot 2025.02.x, whose python3 is 3.12)
endif
endif

$(eval $(generic-package))

# SPDX-License-Identifier: GPL-2.0
# vtrace: build the two kernel modules and the host tools; run the demo and the tests.
#
#   make                 modules (against KDIR) + userspace tools
#   make modules         only the modules; make W=1 for the extra warnings
#   make user            only the host tools (vtrace-merge, vtrace)
#   make check           every test: unit tests, module build, VM selftests
#                        (CHECK_PARTS="unit docs ...": only these parts, scripts/check.sh)
#   make check-matrix    the longer check: the benchmarks that boot the test bed,
#                        the kernel matrix with 6.12 and the PREEMPT_RT pair
#   make demo            the main job, on the test bed
#   make KDIR=/path      build for another kernel's build tree
#   make check KVER=...  run the VM tests on another installed kernel
#   make install         modules_install + tools and man pages under PREFIX
#   make uninstall       remove what install put in place
#   make dkms-install    register the modules with DKMS (rebuilt on kernel updates)

# The running kernel's build tree when it has one, else the headers of the
# Debian kernel linux-image-amd64 points to (scripts/kdir.sh).  KVER=...
# alone selects that installed kernel's headers.  On a fresh machine there
# is none until deps installed linux-headers-amd64: the targets that need
# deps (demo, check) therefore run their work in a second make, which reads
# this again.  An empty KDIR or KVER from the environment counts as unset.
KDIR := $(or $(KDIR),$(shell scripts/kdir.sh $(KVER) 2>/dev/null))
# Kernel release the modules are built for, from the build tree itself
KVER := $(or $(KVER),$(if $(KDIR),$(shell sed -n 's/^\#define UTS_RELEASE "\(.*\)"/\1/p' \
		$(KDIR)/include/generated/utsrelease.h 2>/dev/null)))

export KDIR KVER

VERSION	:= $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)
PREFIX	?= /usr/local
BINDIR	:= $(DESTDIR)$(PREFIX)/bin
MANDIR	:= $(DESTDIR)$(PREFIX)/share/man
TOOLS	:= user/vtrace-merge user/vtrace
# Documentation/man/NAME.S.rst -> build/man/NAME.S (section S)
MANPAGES := $(patsubst Documentation/man/%.rst,build/man/%,$(wildcard Documentation/man/*.rst))
DKMS_SRC := $(DESTDIR)/usr/src/vtrace-$(VERSION)

.PHONY: all modules user check check-unit check-vm check-matrix demo demo-after-deps deps clean help \
	install uninstall man dkms-install dkms-uninstall fuzz

all: modules user

# DEPS_CMD, DEMO_CMD: replaced by scripts/check-setup.sh, which plays a fresh machine
DEPS_CMD ?= ./scripts/install-deps.sh
DEMO_CMD ?= ./scripts/demo.sh

deps:
	@$(DEPS_CMD)

modules:
ifeq ($(KDIR),)
	$(error no kernel build tree found: run make deps as root (it installs linux-headers-amd64), or pass KDIR=/path/to/build)
endif
	@./scripts/check-kconfig.sh $(KDIR)
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

user:
	$(MAKE) -C user

# check.sh runs make afresh for every part that builds; CHECK_PARTS: only these
check: deps
	@./scripts/check.sh $(CHECK_PARTS)

check-unit: user
	$(MAKE) -C user test

check-vm: all
	@./selftests/run_vm_tests.sh

# the longer check: the transport and probe benchmarks at a tiny size (they
# boot the test bed: Documentation/benchmarks.rst), make check's 6.12 entry
# plus the PREEMPT_RT pair (Documentation/kernels.rst); installs the RT
# kernels (packages-matrix.txt) and the modules for those kernels first
check-matrix: deps
	@./scripts/install-deps.sh scripts/packages-matrix.txt
	@CHECK_MATRIX=full ./scripts/check.sh install bench-vm matrix

# libFuzzer on every parser of guest input, FUZZ_SECONDS each: Documentation/fuzzing.rst
FUZZ_SECONDS ?= 60
fuzz:
	$(MAKE) -C user fuzz FUZZ_SECONDS=$(FUZZ_SECONDS)

demo: deps
	@$(MAKE) --no-print-directory demo-after-deps

demo-after-deps: all
	@$(DEMO_CMD)

man: $(MANPAGES)

build/man/%: Documentation/man/%.rst
	@mkdir -p build/man
	rst2man $< $@

install: all man
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules_install INSTALL_MOD_DIR=updates/vtrace \
		$(if $(DESTDIR),INSTALL_MOD_PATH=$(DESTDIR))
	$(if $(DESTDIR),,depmod -a $(KVER))
	install -d $(BINDIR) $(MANDIR)/man1 $(MANDIR)/man4
	install -m 0755 $(wildcard $(TOOLS)) $(BINDIR)
	$(if $(filter %.1,$(MANPAGES)),install -m 0644 $(filter %.1,$(MANPAGES)) $(MANDIR)/man1)
	$(if $(filter %.4,$(MANPAGES)),install -m 0644 $(filter %.4,$(MANPAGES)) $(MANDIR)/man4)

uninstall:
	rm -rf $(DESTDIR)/lib/modules/$(KVER)/updates/vtrace
	$(if $(DESTDIR),,depmod -a $(KVER))
	rm -f $(addprefix $(BINDIR)/,$(notdir $(TOOLS)))
	rm -f $(addprefix $(MANDIR)/man1/,$(notdir $(filter %.1,$(MANPAGES))))
	rm -f $(addprefix $(MANDIR)/man4/,$(notdir $(filter %.4,$(MANPAGES))))

# DKMS: the module sources go to /usr/src/vtrace-VERSION; dkms builds them
# for every installed kernel and again after each kernel update.
dkms-install:
	install -d $(DKMS_SRC)
	cp -r Kbuild dkms.conf kmod include $(DKMS_SRC)/
	$(if $(DESTDIR),,dkms install vtrace/$(VERSION))

dkms-uninstall:
	-dkms remove vtrace/$(VERSION) --all
	rm -rf $(DKMS_SRC)

clean:
	-$(MAKE) -C $(KDIR) M=$(CURDIR) clean 2>/dev/null
	$(MAKE) -C user clean
	rm -rf build

help:
	@sed -n '3,11p' Makefile | sed 's/^# \{0,1\}//'

# SPDX-License-Identifier: GPL-2.0
# vtrace: build the two kernel modules and the host tools; run the demo and the tests.
#
#   make                 modules (against KDIR) + userspace tools
#   make modules         only the modules; make W=1 for the extra warnings
#   make user            only the host tools (vtrace-merge, vtrace)
#   make check           every test: unit tests, module build, VM selftests
#   make demo            the main job, on the test bed
#   make KDIR=/path      build for another kernel's build tree
#   make check KVER=...  run the VM tests on another installed kernel

# The running kernel's build tree when it has one, else the headers of the
# Debian kernel the test bed boots (testbed/default-kver.sh).  KVER=... alone
# selects that installed kernel's headers.
ifdef KVER
KDIR ?= /lib/modules/$(KVER)/build
endif
KDIR ?= $(firstword $(wildcard /lib/modules/$(shell uname -r)/build) \
		$(wildcard /usr/src/linux-headers-$(shell testbed/default-kver.sh 2>/dev/null)))
# Kernel release the modules are built for, from the build tree itself
KVER ?= $(shell sed -n 's/^\#define UTS_RELEASE "\(.*\)"/\1/p' \
		$(KDIR)/include/generated/utsrelease.h 2>/dev/null)

export KDIR KVER

.PHONY: all modules user check check-unit check-vm demo deps clean help

all: modules user

deps:
	@./scripts/install-deps.sh

modules:
ifeq ($(KDIR),)
	$(error no kernel build tree found: install linux-headers-amd64 or pass KDIR=/path/to/build)
endif
	@./scripts/check-kconfig.sh $(KDIR)
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

user:
	$(MAKE) -C user

check: deps
	@./scripts/check.sh

check-unit: user
	$(MAKE) -C user test

check-vm: all
	@./selftests/run_vm_tests.sh

demo: deps all
	@./scripts/demo.sh

clean:
	-$(MAKE) -C $(KDIR) M=$(CURDIR) clean 2>/dev/null
	$(MAKE) -C user clean
	rm -rf build

help:
	@sed -n '3,11p' Makefile | sed 's/^# \{0,1\}//'

# The whole set-up on a fresh Debian machine with the Swift toolchain: `make demo`, `make test`.
SWIFT ?= swift
SYSTEM_PACKAGES := libsqlite3-dev libxml2-dev zlib1g-dev sqlite3 python3 graphviz
DECANT := .build/release/decant
# `make install` copies the release decant to $(DESTDIR)$(PREFIX)/bin (DESTDIR: a staging root for packaging).
PREFIX ?= /usr/local
DESTDIR ?=

.PHONY: demo test test-all build-tests build install deps oracles clean

# Installs the Debian packages the build and the tests need, when they are missing and we are allowed to.
deps:
	@missing=""; \
	for p in $(SYSTEM_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "Installing:$$missing"; \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$missing; \
	  elif command -v sudo >/dev/null 2>&1; then sudo apt-get update -q && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$missing; \
	  else echo "Please install these Debian packages:$$missing" >&2; exit 1; fi; \
	fi

# Test oracles from PyPI (never runtime dependencies): jsonschema checks `--json` output against schemas/.
oracles:
	@python3 -c 'import jsonschema' 2>/dev/null || python3 -m pip install --quiet jsonschema

build: deps
	$(SWIFT) build -c release --product decant

install: build
	install -d "$(DESTDIR)$(PREFIX)/bin"
	install -m 755 "$(DECANT)" "$(DESTDIR)$(PREFIX)/bin/decant"

# The main job on the bundled samples: a default store from CSV, first-run seeding, an older store migrated, a legacy
# archive converted (samples/demo.sh; it writes only under .build/demo).
demo: build
	@bash samples/demo.sh $(DECANT)

# The CLI tests run the debug `decant` binary, which `swift build --build-tests` does not link: it is built here,
# and a CLI test fails (rather than skips) when it is missing.
build-tests: deps oracles
	$(SWIFT) build --build-tests
	$(SWIFT) build --product decant

# The slow suites run small here (crash safety at 12 moments, fuzz at 80 cases) and the policy sample's package
# build not at all; `make test-all` runs them in full (DECANT_FULL_TESTS=1: 50 moments, 320 cases, the sample built).
# DECANT_DEPS_INSTALLED=1 tells the tests that `make deps` installed graphviz: a missing `dot` then fails them.
test: build-tests
	DECANT_DEPS_INSTALLED=1 $(SWIFT) test --skip-build --skip PolicySampleTests

test-all: build-tests
	DECANT_DEPS_INSTALLED=1 DECANT_FULL_TESTS=1 $(SWIFT) test --skip-build

clean:
	rm -rf .build

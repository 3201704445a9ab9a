# The whole set-up on a fresh Debian machine with the Swift toolchain: `make demo`, `make test`.
SWIFT ?= swift
SYSTEM_PACKAGES := libsqlite3-dev libxml2-dev zlib1g-dev sqlite3 python3 graphviz
DECANT := .build/release/decant

.PHONY: demo test build deps oracles clean

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

# The main job on the bundled samples: a default store from CSV, first-run seeding, an older store migrated, a legacy
# archive converted (samples/demo.sh; it writes only under .build/demo).
demo: build
	@bash samples/demo.sh $(DECANT)

test: deps oracles
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

clean:
	rm -rf .build

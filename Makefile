# The two commands a person needs: `make demo` (the main job) and `make test` (every test).
# Each installs what it needs on a fresh machine; the steps below are the pieces they share.

SHELL := /bin/bash
export ONNXRUNTIME_NODE_INSTALL ?= skip
NPM_STAMP := node_modules/.vistool-installed
DEMO_DIR ?= runs/demo

.PHONY: demo test bench setup build fonts lint typecheck test-ts clean

demo: setup
	node bin/vistool.js demo --out $(DEMO_DIR)

test: setup
	npm run typecheck
	npm run lint
	npm test

bench: setup
	npm run bench

setup: $(NPM_STAMP) fonts build

$(NPM_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund
	touch $@

# The task generator renders text through sharp's fontconfig: it needs one sans-serif font.
fonts:
	@fc-list 2>/dev/null | grep -qi 'DejaVuSans' || { \
	  echo "installing fonts-dejavu-core (the generator draws its labels with DejaVu Sans)"; \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq fonts-dejavu-core fontconfig; \
	  else sudo apt-get update -qq && sudo apt-get install -y -qq fonts-dejavu-core fontconfig; fi; }

build: $(NPM_STAMP)
	npm run build

clean:
	rm -rf dist node_modules .venv

# Engram — every target sets itself up; `make help` lists them.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
INSTALLED := $(VENV)/.installed
PROTO_SRC := $(wildcard protos/engram/v1/*.proto)
PROTO_OUT := protos/engram/v1/.generated

# `make run` is the one-machine stack: the embedder runs on CPU by explicit opt-in here;
# elsewhere (Kubernetes) the GPU is the default and CPU refuses to start.
export ENGRAM_EMBEDDER_ALLOW_CPU ?= 1

# The operator dashboard (gateway/dashboard): npm installs and builds it when missing or stale.
DASHBOARD := gateway/dashboard
DASHBOARD_SRC := $(shell find $(DASHBOARD)/src -type f 2>/dev/null) $(addprefix $(DASHBOARD)/,index.html vite.config.ts tsconfig.json)
DASHBOARD_MODULES := $(DASHBOARD)/node_modules/.installed
DASHBOARD_BUNDLE := $(DASHBOARD)/dist/index.html

.PHONY: help setup protos run test lint format bench clean dashboard dashboard-types deploy-check

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-13s %s\n", $$1, $$2}'

$(INSTALLED): pyproject.toml
	@command -v $(PYTHON) >/dev/null || { echo "Python 3.11 is required ($(PYTHON) not found)"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	# torch first and pinned: anything that pulls an unpinned torch fetches a multi-GB CUDA build
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $@

setup: $(INSTALLED) $(PROTO_OUT) ## create .venv, install dependencies, generate protos

$(PROTO_OUT): $(INSTALLED) $(PROTO_SRC) scripts/gen_protos.sh scripts/gen_client_methods.py
	VENV=$(VENV) bash scripts/gen_protos.sh
	touch $@

protos: $(INSTALLED) ## (re)generate Python + mypy stubs from protos/
	VENV=$(VENV) bash scripts/gen_protos.sh
	touch $(PROTO_OUT)

$(DASHBOARD_MODULES): $(DASHBOARD)/package.json $(DASHBOARD)/package-lock.json
	@command -v npm >/dev/null || { echo "npm (Node 20+) is required to build the dashboard"; exit 1; }
	cd $(DASHBOARD) && npm install --no-audit --no-fund
	touch $@

$(DASHBOARD_BUNDLE): $(DASHBOARD_MODULES) $(DASHBOARD_SRC)
	cd $(DASHBOARD) && npm run build

dashboard: $(DASHBOARD_BUNDLE) ## build the operator dashboard when missing or stale (npm)

dashboard-types: setup $(DASHBOARD_MODULES) ## regenerate the dashboard's API types from the gateway's OpenAPI
	$(PY) -m gateway.openapi_snapshot
	cd $(DASHBOARD) && npm run types

run: setup dashboard ## bring the whole stack up on this machine (Ctrl-C stops it)
	$(VENV)/bin/engram up

test: setup dashboard ## run the whole test suite (browser tests included)
	$(PY) -m pytest -q $(PYTEST_ARGS)

lint: setup ## ruff format check + ruff check + mypy
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy

format: setup ## apply ruff formatting and safe fixes
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

bench: setup ## print the benchmark figures (never asserted in tests)
	$(VENV)/bin/engram bench $(BENCH_ARGS)

# `make deploy-check`: checkov over what Kustomize renders (base and every overlay), in its own
# venv with kubectl (kustomize built in); skips and their reasons: deploy/checkov.yaml and
# docs/decisions/0023-deployment-static-checks.md.
CHECKOV_VENV ?= .venv-checkov
CHECKOV_INSTALLED := $(CHECKOV_VENV)/.installed
DEPLOY_TARGETS := deploy/base $(patsubst %/,%,$(sort $(dir $(wildcard deploy/overlays/*/kustomization.yaml))))

$(CHECKOV_INSTALLED): deploy/checkov-requirements.txt
	@command -v $(PYTHON) >/dev/null || { echo "Python 3.11 is required ($(PYTHON) not found)"; exit 1; }
	$(PYTHON) -m venv $(CHECKOV_VENV)
	$(CHECKOV_VENV)/bin/pip install --quiet --upgrade pip
	$(CHECKOV_VENV)/bin/pip install --quiet -r deploy/checkov-requirements.txt
	touch $@

deploy-check: $(CHECKOV_INSTALLED) ## checkov over the rendered base and overlays (skips: deploy/checkov.yaml)
	@set -uo pipefail; rendered=$$(mktemp -d); trap 'rm -rf "$$rendered"' EXIT; failed=; \
	for target in $(DEPLOY_TARGETS); do \
		file="$$(echo "$${target#deploy/}" | tr / -).yaml"; \
		echo "== $$target (rendered as $$file)"; \
		$(CHECKOV_VENV)/bin/kubectl kustomize "$$target" >"$$rendered/$$file" \
			&& (cd "$$rendered" && "$(abspath $(CHECKOV_VENV))/bin/checkov" \
				--config-file "$(CURDIR)/deploy/checkov.yaml" -f "$$file") \
			|| failed="$$failed $$target"; \
	done; \
	echo "not run, by deploy/checkov.yaml (justified in decision 0023):"; grep -E '^ +- CKV' deploy/checkov.yaml; \
	if [ -n "$$failed" ]; then echo "deploy-check failed for:$$failed"; exit 1; fi

# `make client-wheel`: the client library on its own (protos/pyproject.toml: `engram.v1`,
# `engram.operations`, `engram.client`; needs grpcio, protobuf, googleapis-common-protos, httpx;
# its `mcp` extra adds the `engram-mcp` stdio bridge, `engram.mcp_bridge`).
.PHONY: client-wheel
client-wheel: setup ## build dist/engram_client-*.whl: the client library, installable on its own
	$(VENV)/bin/pip wheel --quiet --no-deps --no-build-isolation ./protos -w dist
	rm -rf protos/build protos/engram_client.egg-info
	@ls dist/engram_client-*.whl

.PHONY: eval
eval: setup ## retrieval quality on the standard sets against `make run` (ENGRAM_TOKEN; EVAL_ARGS)
	$(VENV)/bin/engram eval $(EVAL_ARGS)

# `make soak`: `engram soak` (services/bench/soak.py) against the stack at ENGRAM_URL. When
# nothing answers at the default address, it starts `engram up` on the default ports with a
# throw-away data dir, waits for /readyz (the embedding model loads first: a minute or more on
# CPU), runs the soak and stops that stack; the data dir (logs under run/) is removed when the
# soak passes, kept when it fails or with SOAK_KEEP_DATA=1.
SOAK_URL ?= $(or $(ENGRAM_URL),http://127.0.0.1:8080)
SOAK_READY_S ?= 300
SOAK_PROBE = $(PY) -c 'import sys, httpx; sys.exit(httpx.get(sys.argv[1], timeout=5).status_code != 200)' 2>/dev/null

.PHONY: soak
soak: setup ## load test: 64 clients for 60 s, then every acknowledged write checked (SOAK_ARGS)
	@set -uo pipefail; url="$(SOAK_URL)"; deadline=$$((SECONDS + $(SOAK_READY_S))); \
	wait_ready() { \
		until $(SOAK_PROBE) "$$url/readyz"; do \
			if [ $$SECONDS -ge $$deadline ]; then echo "soak: $$url not ready in $(SOAK_READY_S) s"; return 1; fi; \
			if [ -n "$${up:-}" ] && ! kill -0 "$$up" 2>/dev/null; then echo "soak: engram up exited"; return 1; fi; \
			sleep 2; \
		done; \
	}; \
	if $(SOAK_PROBE) "$$url/healthz"; then \
		echo "soak: using the stack at $$url"; \
		wait_ready && exec $(VENV)/bin/engram soak --url "$$url" $(SOAK_ARGS); exit 2; \
	fi; \
	if [ "$$url" != "http://127.0.0.1:8080" ]; then echo "soak: nothing answers at $$url"; exit 2; fi; \
	data="$$(mktemp -d -t engram-soak-XXXXXX)"; status=2; \
	echo "soak: no stack at $$url: starting engram up (data and logs under $$data)"; \
	ENGRAM_DATA_DIR="$$data" $(VENV)/bin/engram up >"$$data/up.log" 2>&1 & up=$$!; \
	trap 'kill -TERM $$up 2>/dev/null; wait $$up; \
		if [ $$status -eq 0 ] && [ -z "$(SOAK_KEEP_DATA)" ]; then rm -rf "$$data"; \
		else echo "soak: stack logs kept under $$data/run (engram up: $$data/up.log)"; fi' EXIT; \
	if ! wait_ready; then tail -n 30 "$$data/up.log"; exit 2; fi; \
	echo "soak: stack ready after $$SECONDS s"; \
	token="$${ENGRAM_GATEWAY_ADMIN_TOKEN:-$${ENGRAM_ADMIN_TOKEN:-$$(cat "$$data/run/dev-token")}}"; \
	ENGRAM_TOKEN="$$token" $(VENV)/bin/engram soak --url "$$url" $(SOAK_ARGS); status=$$?; \
	exit $$status

clean: ## remove the venv and generated code
	rm -rf $(VENV) $(CHECKOV_VENV) protos/engram/v1/*_pb2*.py protos/engram/v1/*_pb2*.pyi $(PROTO_OUT) protos/engram/client/_methods.py \
		$(DASHBOARD)/node_modules $(DASHBOARD)/dist

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

.PHONY: help setup protos run test lint format bench clean dashboard dashboard-types

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-10s %s\n", $$1, $$2}'

$(INSTALLED): pyproject.toml
	@command -v $(PYTHON) >/dev/null || { echo "Python 3.11 is required ($(PYTHON) not found)"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	# torch first and pinned: anything that pulls an unpinned torch fetches a multi-GB CUDA build
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $@

setup: $(INSTALLED) $(PROTO_OUT) ## create .venv, install dependencies, generate protos

$(PROTO_OUT): $(INSTALLED) $(PROTO_SRC) scripts/gen_protos.sh
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

.PHONY: eval
eval: setup ## retrieval quality on the standard sets against `make run` (ENGRAM_TOKEN; EVAL_ARGS)
	$(VENV)/bin/engram eval $(EVAL_ARGS)

clean: ## remove the venv and generated code
	rm -rf $(VENV) protos/engram/v1/*_pb2*.py protos/engram/v1/*_pb2*.pyi $(PROTO_OUT) \
		$(DASHBOARD)/node_modules $(DASHBOARD)/dist

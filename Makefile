# Two entry points for a fresh machine (see README):
#   make demo   set everything up, then run the whole study on the embedded default
#   make test   set everything up, then run the test suite
PY ?= python3.11
VENV := .venv
STAMP := $(VENV)/.agree-installed
OUT ?= demo-out

.PHONY: demo test setup bench clean

demo: $(STAMP)
	$(VENV)/bin/agree demo --out $(OUT)

test: $(STAMP)
	$(VENV)/bin/python -m pytest -q -ra

setup: $(STAMP)

$(STAMP): setup.cfg pyproject.toml constraints.txt scripts/setup.sh scripts/build_kenlm.sh
	PY=$(PY) bash scripts/setup.sh $(VENV)
	touch $(STAMP)

bench: $(STAMP)
	for b in benchmarks/bench_*.py; do $(VENV)/bin/python $$b || exit 1; done

clean:
	rm -rf $(VENV) build *.egg-info

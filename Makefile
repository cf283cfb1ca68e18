# The map of the pipeline. Every step is a file target with real dependencies, so `make -n all`
# shows what would run and finished steps are skipped. Plain `make` lists the targets.
#
# Every suite (worldsense, blocks, canvas, already_said_that) goes through the same stages, set by
# set (a set is configs/<suite>/<set>.yaml; WorldSense's one set is the fetched test_set):
#   data       data/<suite>/<set>/                        generated from the config (or fetched)
#   runs       results/<suite>/<set>/**/*___results.jsonl  the built-in baselines (--baselines, the
#              suite's BASELINES registry) run afresh; model runs are appended to and resumed
#   analysis   results/<suite>/<set>/report.txt           every run on the set: `make <suite>/<set>`
#   report     results/sections/*.json -> results/report.html and .md (the default sets)
#   database   every results file -> results/results.sqlite (`make db`; `make explore` browses it;
#              the report's examples come from it)
# WorldSense keeps its results in the test set (data/worldsense/test_set/results/), as released.
# `make all MODEL=<m> [LIMIT=N]` adds a model's runs (stamps results/runs/<suite>/<m>[.limit<N>].done);
# model results are raw data, never deleted by make.

.DEFAULT_GOAL := help
.DELETE_ON_ERROR:
.SECONDEXPANSION:
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
MAKEFLAGS += --no-builtin-rules --warn-undefined-variables
# Quiet by default: recipes are not echoed, scripts log warnings only and show progress bars on
# steps longer than a few seconds. `make V=1 ...` shows every command and the scripts' INFO lines.
V ?=
ifeq ($(V),)
.SILENT:
export LOGLEVEL ?= WARNING
endif

# ---- variables -----------------------------------------------------------------------------
PYTHON_SYS ?= python3
VENV := .venv
PYTHON := $(VENV)/bin/python
ENV_OK := $(VENV)/.ok
ENGINE_OK := $(VENV)/.engine-ok
BROWSER_OK := $(VENV)/.browser-ok
BENCH_OK := $(VENV)/.bench-ok
EXPLORE_OK := $(VENV)/.explore-ok
CODE_DIRS := common scripts tests $(wildcard bench)
MODELS_CODE := $(wildcard common/models/*.py) common/results.py common/cli.py
REPORT_CODE := scripts/analyse_results.py scripts/build_report.py $(addprefix common/,analysis.py report.py \
	render.py examples.py queries.py provenance.py figures.py stats.py results.py jsonl.py)

# Every configs/<suite>/<set>.yaml is a set: `make <suite>/<set>` builds its report.txt and prints it.
sets_of = $(patsubst configs/$(1)/%.yaml,%,$(wildcard configs/$(1)/*.yaml))
ALL_SETS := worldsense/test_set $(foreach s,blocks canvas already_said_that,$(addprefix $(s)/,$(call sets_of,$(s))))
DEFAULT_SETS = worldsense/test_set blocks/cogsci_problems blocks/scaling canvas/standard canvas/scaling \
	$(addprefix already_said_that/,$(ASAT_GENERATED))
# the results database (schema: docs/database.md) and Datasette's canned queries beside it
DB := results/results.sqlite
DB_METADATA := results/results.metadata.json
EXPLORE_DB ?= $(DB)
EXPLORE_PORT ?= 8001
DB_RESULTS = $(WS_RESULTS) $(wildcard results/blocks/*/*/*___results.jsonl results/canvas/*/*___results.jsonl \
	results/already_said_that/*/*___results.jsonl results/already_said_that/*/*___turns.jsonl)
DB_CODE = scripts/build_database.py common/database.py common/queries.py common/results.py $(wildcard \
	common/worldsense/*.py common/blocks/*.py common/canvas/*.py common/canvas/tasks/*.py common/already_said_that/*.py)
# The report: a section per default set (Already Said That: one for all its sets), and one per
# other blocks or canvas set once built (`make blocks/mine`, `make canvas/scaling`).
BUILT_OTHER_SETS = $(filter-out $(DEFAULT_SETS),$(patsubst results/%/report.txt,%,$(wildcard \
	$(foreach s,blocks canvas,$(patsubst %,results/$(s)/%/report.txt,$(call sets_of,$(s)))))))
SECTIONS = $(addprefix results/sections/,worldsense.json blocks.json blocks_scaling.json canvas.json \
	canvas_scaling.json already_said_that.json $(addsuffix .json,$(subst /,_,$(BUILT_OTHER_SETS))))

# external data (stamps written when every file verified)
WS := data/worldsense
WS_CORE := $(WS)/.fetched-core
WS_OTHER := $(WS)/.fetched-other
BLOCKS_DATA := data/cogsci22_blocks/.fetched
# worldsense: the official test set, its results (the release's and ours), the template's random run
WS_TEST := $(WS)/test_set
WS_TESTSET ?= $(WS_TEST)
WS_ANCHOR ?=
WS_RANDOM := $(WS_TEST)/results/basic___random___results.jsonl.done
WS_RESULTS := $(wildcard $(WS_TEST)/results/*___results.jsonl)
WS_CODE := scripts/analyse_results.py $(wildcard common/worldsense/*.py) $(REPORT_CODE)
WS_OTHER_REPORTS := $(patsubst %,results/worldsense/other_tests/%/report.txt,memorisation ood-size ood-query ood-problem)
# blocks: the generated sets, the release's problems, the model set of MODEL runs
BLOCKS_SETS := $(call sets_of,blocks)
BLOCKS_RELEASED := data/cogsci22_blocks/dataset/simple_stack/problems
BLOCKS_CODE := $(wildcard common/blocks/*.py)
BLOCKS_RUN_CODE := scripts/lm_plan.py scripts/codex_translate.py $(BLOCKS_CODE) $(MODELS_CODE)
BLOCKS_REPRODUCED := results/blocks/cogsci22_reproduced.txt
BLOCKS_SET ?= cogsci_problems
# the sets a MODEL run of blocks (and canvas) answers (`make all MODEL=...`: the default ones, as every suite)
BLOCKS_MODEL_SETS ?= $(patsubst blocks/%,%,$(filter blocks/%,$(DEFAULT_SETS)))
CANVAS_MODEL_SETS ?= $(patsubst canvas/%,%,$(filter canvas/%,$(DEFAULT_SETS)))
# The views of a generated set, read from its manifest (a failure stops the recipe: `views=$$(...)`
# is a command of its own under `set -e`, unlike a `for` over a command substitution).
BLOCKS_VIEWS = views=$$($(PYTHON) -c 'import json, sys; print(*json.load(open(sys.argv[1]))["views"])' $(1)); \
	test -n "$$views" || { echo "$(1): no views" >&2; exit 1; }
# canvas: trials in the WorldSense format, asked with its protocol and built-ins
CANVAS_SETS := $(call sets_of,canvas)
CANVAS_CODE := $(wildcard common/canvas/*.py common/canvas/tasks/*.py) common/worldsense/run.py \
	common/worldsense/baselines.py
# already_said_that ("asat" in target names): the sets, WordNet, the original eval's data
ASAT_SETS := $(call sets_of,already_said_that)
ASAT_ORIGINAL_SETS := $(filter original_%,$(ASAT_SETS))
ASAT_GENERATED := $(filter-out original_%,$(ASAT_SETS))
ASAT_WORDNET := data/nltk_data/.wordnet-ok
ASAT_ORIGINAL := data/already_said_that_original/report.json
ASAT_DATA_CODE := scripts/generate_already_said_that.py common/config.py common/jsonl.py $(addprefix \
	common/already_said_that/,__init__.py distractors.py winograd.py generate.py original.py prompts.py wordnet.py)
ASAT_CODE := scripts/already_said_that.py $(wildcard common/already_said_that/*.py) $(MODELS_CODE)

# MODEL=<built-in, config name, .yaml, or a model file .py (a copy of scripts/test_random_model.py)>
# runs that model through every suite's default sets (`make all`) or one suite (`make <suite>-model`);
# LIMIT=N caps the items it is asked per suite and set; SET="key=value ..." overrides settings of
# the model's config (as --set does), e.g. SET=base_url=http://127.0.0.1:8081/v1 or SET=samples=3.
# BATCH=1 sends what is still to ask as batches (--batch: a step stops with exit code 75 while its
# batch is out, and the same make command collects it later); WAIT=1 waits for each batch instead.
MODEL ?=
LIMIT ?=
BATCH ?=
WAIT ?=
MODEL_TAG := $(basename $(notdir $(MODEL)))$(if $(LIMIT),.limit$(LIMIT))
MODEL_CONFIG := $(wildcard configs/models/$(MODEL).yaml $(filter %.yaml %.yml %.py,$(MODEL)))
SET ?=
MODEL_ARGS := $(strip --model $(MODEL) $(if $(LIMIT),--limit $(LIMIT)) $(addprefix --set ,$(SET)) \
	$(if $(BATCH)$(WAIT),--batch) $(if $(WAIT),--wait))
model_run = $(if $(MODEL),results/runs/$(1)/$(MODEL_TAG).done)
# After a script whose batch is still out (exit 75) a step goes on with its other scripts and ends
# with 75 (no stamp), so one make sends every batch of the step; any other failure stops it.
past_batch = || { code=$$?; test $$code -eq 75 || exit $$code; pending=75; }

# ---- user-facing targets ---------------------------------------------------------------------
.PHONY: help all clean sets $(ALL_SETS) env lock data data-worldsense-other test test-all lint format db explore

## List the targets with one line each.
help:
	@echo "Targets (DATA_MIRROR=<dir> reads external data from a local mirror instead of the network):"
	@awk '/^## /{doc=substr($$0,4); next} doc && /^[a-zA-Z0-9_.-]+:/ {sub(/:.*/,""); printf "  %-24s %s\n", $$0, doc; doc=""}' $(MAKEFILE_LIST)
	@printf "  %-24s %s\n" "<suite>/<set>" "Build one set: its data, its baselines, its analysis (results/<suite>/<set>/report.txt); print it."
	@echo "Sets found (configs/<suite>/*.yaml): $(ALL_SETS)"
	@echo "Default sets (built by make all): $(DEFAULT_SETS)"

## Reproduce the papers, run the baselines (and MODEL=<config> LIMIT=N) on the default sets, write the report.
all: data $(addprefix results/,$(addsuffix /report.txt,$(DEFAULT_SETS))) $(BLOCKS_REPRODUCED) results/report.html
	@cat results/report.txt

## Delete generated sets and analysis outputs (never downloads, model results or the response cache).
clean:
	rm -rf .pytest_cache .ruff_cache .cache/worldsense data/blocks data/already_said_that
	rm -f data/canvas/*/trials.jsonl.bz2 data/canvas/*/manifest.json
	rm -rf results/sections results/figures results/runs results/report.html results/report.md results/report.txt
	rm -f $(DB) $(DB_METADATA)
	rm -rf results/*/*/report.txt results/*/*/.baselines results/*/*/figures results/*/*/stats.csv \
	    results/blocks/cogsci22_*
	find . -name __pycache__ -not -path './$(VENV)/*' -prune -exec rm -rf {} +

## Build every set of configs/<suite>/*.yaml through its baselines and analysis.
sets: $(ALL_SETS)

$(ALL_SETS): %: results/%/report.txt
	cat $<

## Create the virtual environment .venv from requirements.lock (exact versions; done automatically when needed).
env: $(ENV_OK)

## Fetch the external data: all five WorldSense test sets, its training sets, the CogSci 2022 blocks release.
data: $(WS_CORE) $(BLOCKS_DATA) $(WS_OTHER)

## Fetch the four other WorldSense test sets (memorisation, ood-*); offline, a warning (not in the mirror).
data-worldsense-other: $(WS_OTHER)

## Run the fast tests and the linter (offline, a few minutes).
test: lint $(WS_CORE) $(BLOCKS_DATA) $(ASAT_WORDNET)
	$(PYTHON) -m pytest -m "not slow and not integration"

## Run every test, including the slow ones and those against llama.cpp, headless Chromium and Datasette.
test-all: lint $(WS_CORE) $(BLOCKS_DATA) $(ASAT_WORDNET) $(ENGINE_OK) $(BROWSER_OK) $(EXPLORE_OK)
	$(PYTHON) -m pytest

## Check the code with ruff: lint rules, and that the tree is formatted (`make format` fixes both).
lint: $(ENV_OK)
	$(PYTHON) -m ruff check --output-format concise $(CODE_DIRS)
	$(PYTHON) -m ruff format --check --quiet $(CODE_DIRS) || \
	  { echo "some files are not formatted: run make format" >&2; exit 1; }

## Format the code (ruff format) and fix what ruff's lint can fix automatically.
format: $(ENV_OK)
	$(PYTHON) -m ruff format $(CODE_DIRS)
	$(PYTHON) -m ruff check --fix $(CODE_DIRS)

# ---- environment -----------------------------------------------------------------------------
# requirements.txt keeps the loose bounds; requirements.lock pins every package exactly (what
# `make env` installs, so a run in a year gets the same versions). `make lock` re-resolves it.
$(ENV_OK): requirements.lock pyproject.toml
	$(PYTHON_SYS) -c 'import sys; sys.exit(sys.version_info < (3, 11) and "Python 3.11 or newer is needed: make PYTHON_SYS=python3.11")'
	$(PYTHON_SYS) -m venv $(VENV)
	$(PYTHON) -m pip install --quiet --disable-pip-version-check -r requirements.lock -e .
	touch $@

## Re-resolve requirements.txt to the newest allowed versions and pin them in requirements.lock.
lock:
	rm -rf .lock-venv
	$(PYTHON_SYS) -m venv .lock-venv
	.lock-venv/bin/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
	echo '# Exact versions installed by `make env`; generated by `make lock` from requirements.txt.' > requirements.lock.tmp
	.lock-venv/bin/python -m pip freeze --all --exclude-editable | grep -v -E '^(pip|setuptools|wheel)==' >> requirements.lock.tmp
	mv requirements.lock.tmp requirements.lock
	rm -rf .lock-venv

# Optional extras, each installed by its own target: pyperplan (bench-blocks), llama-cpp-python
# (test-engine; builds from source, GGML_NATIVE=OFF runs on any x86-64 CPU), selenium + Debian's
# chromium (check-report; apt-get as root), Datasette (explore).
$(BENCH_OK): requirements-bench.txt | $(ENV_OK)
	$(PYTHON) -m pip install --quiet --disable-pip-version-check -r requirements-bench.txt -c requirements.lock
	touch $@

$(EXPLORE_OK): requirements-explore.txt | $(ENV_OK)
	$(PYTHON) -m pip install --quiet --disable-pip-version-check -r requirements-explore.txt -c requirements.lock
	touch $@

$(ENGINE_OK): requirements-engine.txt | $(ENV_OK)
	CMAKE_ARGS="-DGGML_NATIVE=OFF" $(PYTHON) -m pip install --disable-pip-version-check -r requirements-engine.txt -c requirements.lock
	touch $@

$(BROWSER_OK): requirements-browser.txt | $(ENV_OK)
	if ! command -v chromium > /dev/null || ! command -v chromedriver > /dev/null; then \
	  if [ "$$(id -u)" != 0 ]; then \
	    echo "chromium and chromium-driver are missing: run 'sudo apt-get install chromium chromium-driver', then 'make browser' again" >&2; \
	    exit 1; \
	  fi; \
	  apt-get update -qq; \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver > /dev/null; \
	fi
	$(PYTHON) -m pip install --quiet --disable-pip-version-check -r requirements-browser.txt -c requirements.lock
	touch $@

# ---- external data (pinned SHA-256; the stamp is written only when every file verified) --------

$(WS_CORE): configs/data/worldsense.yaml configs/data/worldsense.sha256 | $(ENV_OK)
	$(PYTHON) scripts/fetch_data.py $< --group test_set training_set --stamp $@

# The offline mirror lacks the other test sets: without network this warns and writes no stamp.
$(WS_OTHER): configs/data/worldsense.yaml configs/data/worldsense.sha256 | $(ENV_OK)
	$(PYTHON) scripts/fetch_data.py $< --group other_tests --skip-offline --stamp $@

$(BLOCKS_DATA): configs/data/cogsci22_blocks.yaml configs/data/cogsci22_blocks.sha256 | $(ENV_OK)
	$(PYTHON) scripts/fetch_data.py $< --stamp $@

# ---- worldsense ------------------------------------------------------------------------------
# The official test set is the one set; its baseline is the template script's random model
# (its .done stamp marks a finished run). results/worldsense/test_set/report.txt: the published
# tables plus the random row, rebuilt when the data, a results file or the code changes.

.PHONY: analyse-worldsense analyse-worldsense-other bench-worldsense

$(WS_RANDOM): $(WS_CORE) scripts/test_random_model.py
	$(PYTHON) scripts/test_random_model.py -t $(WS_TEST)
	touch $@

results/worldsense/test_set/report.txt: $(WS_CORE) $(WS_RANDOM) $(WS_RESULTS) $(WS_CODE)
	$(PYTHON) scripts/analyse_results.py -t $(WS_TEST) --quiet --out $@

# A WorldSense test set other than the official one comes from the network only (not in the mirror).
need_ws_set = test -d $(1) || { echo "error: no test set $(1): the other WorldSense test sets are not in" \
	"the offline mirror; fetch them once with network: make data-worldsense-other" >&2; exit 2; }

## Print the accuracy and bias tables of a WorldSense test set (WS_TESTSET=<dir>, default the official one).
analyse-worldsense: $(WS_CORE)
	$(call need_ws_set,$(WS_TESTSET))
	$(PYTHON) scripts/analyse_results.py -t $(WS_TESTSET)

## Print and save the tables of the four other WorldSense test sets (their data needs the network once).
analyse-worldsense-other: $(WS_OTHER_REPORTS)

results/worldsense/other_tests/%/report.txt: $(WS_OTHER) $(WS_CODE)
	$(call need_ws_set,$(WS)/other_tests/$*)
	$(PYTHON) scripts/analyse_results.py -t $(WS)/other_tests/$* --out $@

## Time the WorldSense analysis, cold and cached, against the release's script (WS_ANCHOR=<dir>).
bench-worldsense: $(WS_CORE)
	$(PYTHON) bench/bench_worldsense.py -t $(WS_TEST) $(if $(WS_ANCHOR),--anchor $(WS_ANCHOR),)

# ---- blocks ----------------------------------------------------------------------------------
# data/blocks/<set>/problems/ from configs/blocks/<set>.yaml (manifest.json, written last, is the
# stamp); data/blocks/<set>/prompts/paper___<type>___<view>.jsonl for every view of the set and
# both methods (nl: plan in English; pddl: translate for the planner). `released` holds the
# prompts of the release's own problems with its BFS plans as examples: the paper's prompts.

.PHONY: reproduce-blocks blocks-prompts analyse-blocks bench-blocks

## Re-score the paper's released blocks-world outputs: published table, strict, baselines, CIs, McNemar.
reproduce-blocks: $(BLOCKS_REPRODUCED)
	cat $<

# the printed tables, and beside them the summary and per-problem CSV files
$(BLOCKS_REPRODUCED): $(BLOCKS_DATA) scripts/reproduce_blocks.py $(BLOCKS_CODE)
	mkdir -p $(@D)
	tmp=$$(mktemp $@.XXXXXX.tmp); trap 'rm -f "$$tmp"' EXIT; \
	$(PYTHON) scripts/reproduce_blocks.py --release data/cogsci22_blocks \
	    --summary results/blocks/cogsci22_reproduced.csv --per-problem results/blocks/cogsci22_rescored.csv > "$$tmp"; \
	mv "$$tmp" $@

## Write the few-shot planning and translation prompts of every blocks-world set and view.
blocks-prompts: data/blocks/released/prompts/.done $(foreach s,$(BLOCKS_SETS),data/blocks/$(s)/prompts/.done)

## Print the model-vs-model analysis of results/blocks/BLOCKS_SET (figures in its figures/ directory).
analyse-blocks: $(ENV_OK)
	$(PYTHON) scripts/analyse_results.py results/blocks/$(BLOCKS_SET) --figures results/blocks/$(BLOCKS_SET)/figures

## Time the blocks planners and generator against pyperplan's BFS (installs pyperplan into .venv).
bench-blocks: $(BENCH_OK)
	$(PYTHON) bench/bench_blocks.py

$(foreach s,$(BLOCKS_SETS),data/blocks/$(s)/problems/manifest.json): data/blocks/%/problems/manifest.json: \
		configs/blocks/%.yaml scripts/generate_problems.py $(BLOCKS_CODE) configs/blocks/vocab/items.yaml \
		configs/blocks/vocab/weird.yaml $(BLOCKS_DATA)
	$(PYTHON) scripts/generate_problems.py --specs-file $< --problem-path $(@D)

$(foreach s,$(BLOCKS_SETS),data/blocks/$(s)/prompts/.done): data/blocks/%/prompts/.done: \
		data/blocks/%/problems/manifest.json scripts/generate_prompts.py $(BLOCKS_CODE)
	$(call BLOCKS_VIEWS,$<); \
	rm -f $(@D)/paper___*___*.jsonl; \
	for view in $$views; do \
	  for type in nl pddl; do \
	    $(PYTHON) scripts/generate_prompts.py --problem-path $(<D) --view $$view --prompt-type $$type \
	        --output $(@D)/paper___$${type}___$$view.jsonl; \
	  done; \
	done
	$(PYTHON) scripts/set_aside_stale.py blocks data/blocks/$*
	touch $@

data/blocks/released/prompts/.done: $(BLOCKS_DATA) scripts/generate_prompts.py $(BLOCKS_CODE)
	for view in one two all; do \
	  for type in nl pddl; do \
	    $(PYTHON) scripts/generate_prompts.py --problem-path $(BLOCKS_RELEASED) --plans-dir $(BLOCKS_RELEASED)/plans \
	        --view $$view --prompt-type $$type --output $(@D)/paper___$${type}___$$view.jsonl; \
	  done; \
	done
	touch $@

$(foreach s,$(BLOCKS_SETS),results/blocks/$(s)/.baselines): results/blocks/%/.baselines: \
		data/blocks/%/prompts/.done $(BLOCKS_RUN_CODE)
	$(PYTHON) scripts/lm_plan.py -t data/blocks/$* --baselines > /dev/null
	$(PYTHON) scripts/codex_translate.py -t data/blocks/$* --baselines > /dev/null
	touch $@

$(foreach s,$(BLOCKS_SETS),results/blocks/$(s)/report.txt): results/blocks/%/report.txt: results/blocks/%/.baselines \
		$$(wildcard results/blocks/$$*/*/*___results.jsonl) $(BLOCKS_CODE) $(REPORT_CODE)
	$(PYTHON) scripts/analyse_results.py $(@D) --figures $(@D)/figures --quiet --out $@

# ---- canvas ----------------------------------------------------------------------------------
# data/canvas/<set>/trials.jsonl.bz2 (written last, after manifest.json) from
# configs/canvas/<set>.yaml. Every model, built-in or not, answers into results/canvas/<set>/.

.PHONY: canvas-trials bench-pictures

## Time drawing the pictures of the standard canvas set (every modality) against generating it.
bench-pictures: $(ENV_OK)
	$(PYTHON) bench/bench_pictures.py

## Generate the canvas trial sets of configs/canvas/ (data/canvas/<set>/trials.jsonl.bz2 + manifest.json).
canvas-trials: $(foreach s,$(CANVAS_SETS),data/canvas/$(s)/trials.jsonl.bz2)

data/canvas/%/trials.jsonl.bz2: configs/canvas/%.yaml scripts/generate_canvas.py $(CANVAS_CODE) | $(ENV_OK)
	$(PYTHON) scripts/generate_canvas.py $< --out $(@D)
	$(PYTHON) scripts/set_aside_stale.py canvas $(@D)

$(foreach s,$(CANVAS_SETS),results/canvas/$(s)/.baselines): results/canvas/%/.baselines: \
		data/canvas/%/trials.jsonl.bz2 scripts/ask_model.py $(CANVAS_CODE) $(MODELS_CODE)
	$(PYTHON) scripts/ask_model.py -t $(<D) --baselines
	touch $@

$(foreach s,$(CANVAS_SETS),results/canvas/$(s)/report.txt): results/canvas/%/report.txt: results/canvas/%/.baselines \
		$$(wildcard results/canvas/$$*/*___results.jsonl) $(CANVAS_CODE) $(REPORT_CODE)
	$(PYTHON) scripts/analyse_results.py -t data/canvas/$* --figures $(@D)/figures --csv $(@D)/stats.csv --quiet \
	    --out $@

# ---- Already Said That -----------------------------------------------------------------------
# WordNet for nltk, offline: Debian's packages copied into data/nltk_data with the lexnames file
# (the stamp holds the sorted word list's SHA-256). Sets: data/already_said_that/<set>/ from
# configs/already_said_that/<set>.yaml (manifest.json, written last, is the stamp). The sets
# named original_* use the original eval's data from the evals==3.0.1.post1 wheel (PyPI once).

.PHONY: asat-data asat-original bench-asat

## Build the six Already Said That sets (word samples + distractor pools) of configs/already_said_that/.
asat-data: $(foreach s,$(ASAT_GENERATED),data/already_said_that/$(s)/manifest.json)

## Get the original eval's data from the evals==3.0.1.post1 wheel (PyPI) and build the original_* sets.
asat-original: $(foreach s,$(ASAT_ORIGINAL_SETS),data/already_said_that/$(s)/manifest.json)

## Time the Already Said That runner: built-in solvers on every set, and over HTTP against a bare loop.
bench-asat: asat-data | $(ENV_OK)
	$(PYTHON) bench/bench_already_said_that.py

# Make WordNet loadable by nltk offline (apt-get installs Debian's wordnet packages if needed; root).
$(ASAT_WORDNET): scripts/setup_wordnet.py common/already_said_that/wordnet.py | $(ENV_OK)
	$(PYTHON) scripts/setup_wordnet.py

$(ASAT_ORIGINAL): configs/data/already_said_that_original.sha256 scripts/fetch_already_said_that_original.py \
		common/already_said_that/original.py common/already_said_that/distractors.py \
		common/already_said_that/winograd.py | $(ENV_OK)
	$(PYTHON) scripts/fetch_already_said_that_original.py

$(foreach s,$(ASAT_GENERATED),data/already_said_that/$(s)/manifest.json): \
		data/already_said_that/%/manifest.json: configs/already_said_that/%.yaml $(ASAT_DATA_CODE) $(ASAT_WORDNET)
	$(PYTHON) scripts/generate_already_said_that.py --config $< --out $(@D)
	$(PYTHON) scripts/set_aside_stale.py already_said_that $(@D)

$(foreach s,$(ASAT_ORIGINAL_SETS),data/already_said_that/$(s)/manifest.json): \
		data/already_said_that/%/manifest.json: configs/already_said_that/%.yaml $(ASAT_DATA_CODE) $(ASAT_ORIGINAL)
	$(PYTHON) scripts/generate_already_said_that.py --config $< --out $(@D)
	$(PYTHON) scripts/set_aside_stale.py already_said_that $(@D)

$(foreach s,$(ASAT_SETS),results/already_said_that/$(s)/.baselines): results/already_said_that/%/.baselines: \
		data/already_said_that/%/manifest.json $(ASAT_CODE)
	$(PYTHON) scripts/already_said_that.py -t $(<D) --baselines
	touch $@

$(foreach s,$(ASAT_SETS),results/already_said_that/$(s)/report.txt): results/already_said_that/%/report.txt: \
		results/already_said_that/%/.baselines $$(wildcard results/already_said_that/$$*/*___results.jsonl) \
		$(ASAT_CODE) $(REPORT_CODE)
	$(PYTHON) scripts/analyse_results.py -t $(@D) --figures $(@D)/figures --quiet --out $@

# ---- the report ------------------------------------------------------------------------------
# Each section (results/sections/<name>.json and its terminal text .txt, figures under
# results/figures/<name>/) is the analysis of the default sets of one suite, with every model
# run on them; build_report.py gathers the sections into one standalone HTML page and a
# Markdown file. A section is rebuilt only when its inputs or code change, the report only when
# a section changes.
.PHONY: report browser check-report test-engine bench-models

## Build the one report of every suite: results/report.html (standalone) and results/report.md.
report: results/report.html

## Install what the browser check of the report needs: Debian's chromium + chromium-driver, selenium.
browser: $(BROWSER_OK)

## Open results/report.html in headless Chromium: images loaded, tables there, no console error, screenshot.
check-report: $(BROWSER_OK) results/report.html
	$(PYTHON) -m pytest -m integration -q tests/test_report_browser.py

## Against a real llama.cpp server (tiny model): the runner, refusals, and make all MODEL=... in a repo copy.
test-engine: $(ENGINE_OK) $(WS_CORE) $(BLOCKS_DATA)
	$(PYTHON) -m pytest -m integration -s tests/models/test_models_engine.py tests/models/test_engine_make_all.py

## Benchmark the model runner against bare requests.post loops on a local server (prints rates).
bench-models: $(ENV_OK)
	$(PYTHON) bench/bench_runner.py

results/report.html results/report.md &: $(SECTIONS) $(DB) $(REPORT_CODE)
	$(PYTHON) scripts/build_report.py $(SECTIONS) --database $(DB) --html results/report.html \
	    --markdown results/report.md --summary results/report.txt > /dev/null

# section = analyse_results.py <what> --section $@ (and its text beside it) --figures results/figures/<name>
section = $(PYTHON) scripts/analyse_results.py $(1) --quiet --section $@ --out $(@:.json=.txt) \
	--figures results/figures/$(basename $(notdir $@))

results/sections/worldsense.json: results/worldsense/test_set/report.txt $(call model_run,worldsense) \
		$(WS_RESULTS) $(WS_CODE)
	$(call section,-t $(WS_TEST))

results/sections/blocks.json: results/blocks/cogsci_problems/report.txt $(BLOCKS_REPRODUCED) \
		$(call model_run,blocks) $(wildcard results/blocks/cogsci_problems/*/*___results.jsonl) $(BLOCKS_CODE) \
		$(REPORT_CODE)
	$(call section,results/blocks/cogsci_problems)

results/sections/blocks_scaling.json: results/blocks/scaling/report.txt $(call model_run,blocks) \
		$(wildcard results/blocks/scaling/*/*___results.jsonl) $(BLOCKS_CODE) $(REPORT_CODE)
	$(call section,results/blocks/scaling)

results/sections/canvas.json: results/canvas/standard/report.txt $(call model_run,canvas) \
		$(wildcard results/canvas/standard/*___results.jsonl) $(CANVAS_CODE) $(REPORT_CODE)
	$(call section,-t data/canvas/standard)

# canvas/scaling, and a built set that is not a default one (explicit rules above take precedence)
results/sections/blocks_%.json: results/blocks/%/report.txt $$(wildcard results/blocks/$$*/*/*___results.jsonl) \
		$(BLOCKS_CODE) $(REPORT_CODE)
	$(call section,results/blocks/$*)

results/sections/canvas_%.json: results/canvas/%/report.txt $(call model_run,canvas) \
		$$(wildcard results/canvas/$$*/*___results.jsonl) $(CANVAS_CODE) $(REPORT_CODE)
	$(call section,-t data/canvas/$*)

results/sections/already_said_that.json: $(addprefix results/,$(addsuffix /report.txt,$(filter \
		already_said_that/%,$(DEFAULT_SETS)))) $(call model_run,already_said_that) \
		$(wildcard results/already_said_that/*/*___results.jsonl) $(ASAT_CODE) $(REPORT_CODE)
	$(call section,-t results/already_said_that)

# ---- the results database ------------------------------------------------------------------
# results/results.sqlite: every item and answer of every results file of every suite (not only the
# default sets), scored by each suite's own code; rebuilt when a results file (or that code)
# changes. The default sets are built first (order-only: their analysis changing alone does not
# rebuild it). `make explore` serves it with Datasette (EXPLORE_DB=<file> serves another one).
.PHONY: check-explore bench-db

## Build the results database results/results.sqlite: every answer of every run, one schema (docs/database.md).
db: $(DB)

$(DB) $(DB_METADATA) &: $(DB_RESULTS) $(DB_CODE) $(foreach s,worldsense blocks canvas already_said_that,$(call \
		model_run,$(s))) | $(addprefix results/,$(addsuffix /report.txt,$(DEFAULT_SETS)))
	$(PYTHON) scripts/build_database.py --out $(DB) --metadata $(DB_METADATA)

## Browse the results database in Datasette on http://127.0.0.1:EXPLORE_PORT/ (installs Datasette; Ctrl-C stops).
explore: $(EXPLORE_OK) $(EXPLORE_DB)
	@echo "Datasette: http://127.0.0.1:$(EXPLORE_PORT)/$(basename $(notdir $(EXPLORE_DB))) (Ctrl-C stops it)"
	$(VENV)/bin/datasette serve -i $(EXPLORE_DB) --metadata $(basename $(EXPLORE_DB)).metadata.json \
	    --host 127.0.0.1 --port $(EXPLORE_PORT) --setting sql_time_limit_ms 30000 --setting default_page_size 50 \
	    --setting truncate_cells_html 120

## Time building the database of the released WorldSense results (87,048 trials x 4 models; median of 5 runs).
bench-db: $(WS_CORE)
	$(PYTHON) bench/bench_database.py

## Open the explorer in headless Chromium: a canned disagreements query gives the count the report prints.
check-explore: $(BROWSER_OK) $(EXPLORE_OK) results/report.html
	$(PYTHON) -m pytest -m integration -q tests/test_explore_browser.py

# ---- model runs (MODEL=...): resumable, a rerun or a larger LIMIT asks only what is missing --------
.PHONY: worldsense-model blocks-model canvas-model asat-model forget
need_model = test -n "$(MODEL)" || { echo "error: name the model: make $@ MODEL=<a built-in, a config in" \
	"configs/models/, a .yaml path or a model file .py> [LIMIT=N], e.g. make $@ MODEL=llamacpp LIMIT=10" >&2; exit 2; }

## Take MODEL=<name>'s results out of every suite (moved to results/forgotten/, the report rebuilt without them).
forget: | $(ENV_OK)
	@$(need_model)
	$(PYTHON) scripts/forget_model.py $(MODEL)

## Run MODEL=<config> [LIMIT=N] on the WorldSense test set, then print its analysis.
worldsense-model: $(call model_run,worldsense)
	@$(need_model)
	$(PYTHON) scripts/analyse_results.py -t $(WS_TEST)

## Run MODEL=<config> [LIMIT=N] on both blocks methods, every view of BLOCKS_MODEL_SETS, then print their analyses.
blocks-model: $(call model_run,blocks)
	@$(need_model)
	for set in $(BLOCKS_MODEL_SETS); do \
	  $(PYTHON) scripts/analyse_results.py results/blocks/$$set --figures results/blocks/$$set/figures; \
	done

## Run MODEL=<config> [LIMIT=N] on the default canvas sets (standard, scaling), then print their analyses.
canvas-model: $(call model_run,canvas)
	@$(need_model)
	for set in $(CANVAS_MODEL_SETS); do \
	  $(PYTHON) scripts/analyse_results.py -t data/canvas/$$set --figures results/canvas/$$set/figures; \
	done

## Run MODEL=<config> [LIMIT=N] on every Already Said That set (not original_*), then print the analysis of them all.
asat-model: $(call model_run,already_said_that)
	@$(need_model)
	$(PYTHON) scripts/analyse_results.py -t results/already_said_that --figures results/already_said_that/figures

results/runs/worldsense/$(MODEL_TAG).done: $(WS_CORE) $(MODEL_CONFIG) | $(ENV_OK)
	$(PYTHON) scripts/ask_model.py -t $(WS_TEST) $(MODEL_ARGS)
	mkdir -p $(@D)
	touch $@

results/runs/blocks/$(MODEL_TAG).done: $(foreach s,$(BLOCKS_MODEL_SETS),data/blocks/$(s)/prompts/.done) \
		$(MODEL_CONFIG) | $(ENV_OK)
	pending=0; for set in $(BLOCKS_MODEL_SETS); do \
	  $(PYTHON) scripts/lm_plan.py -t $$set $(MODEL_ARGS) $(past_batch); \
	  $(PYTHON) scripts/codex_translate.py -t $$set $(MODEL_ARGS) $(past_batch); \
	done; exit $$pending
	mkdir -p $(@D)
	touch $@

results/runs/canvas/$(MODEL_TAG).done: $(foreach s,$(CANVAS_MODEL_SETS),data/canvas/$(s)/trials.jsonl.bz2) \
		$(MODEL_CONFIG) | $(ENV_OK)
	pending=0; for set in $(CANVAS_MODEL_SETS); do \
	  $(PYTHON) scripts/ask_model.py -t data/canvas/$$set $(MODEL_ARGS) $(past_batch); \
	done; exit $$pending
	mkdir -p $(@D)
	touch $@

results/runs/already_said_that/$(MODEL_TAG).done: $(foreach s,$(ASAT_GENERATED),data/already_said_that/$(s)/manifest.json) \
		$(MODEL_CONFIG) | $(ENV_OK)
	pending=0; for set in $(ASAT_GENERATED); do \
	  $(PYTHON) scripts/already_said_that.py -t $$set $(MODEL_ARGS) $(past_batch); \
	done; exit $$pending
	mkdir -p $(@D)
	touch $@

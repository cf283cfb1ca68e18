# The map of the pipeline. Every step is a file target with real dependencies, so `make -n all`
# shows what would run and finished steps are skipped. Plain `make` lists the targets.

.DEFAULT_GOAL := help
.DELETE_ON_ERROR:
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
MAKEFLAGS += --no-builtin-rules --warn-undefined-variables

# ---- variables -----------------------------------------------------------------------------
PYTHON_SYS ?= python3
VENV := .venv
PYTHON := $(VENV)/bin/python
ENV_OK := $(VENV)/.ok
COMMON := $(shell find common -name '*.py')

WS := data/worldsense
WS_CORE := $(WS)/.fetched-core
WS_OTHER := $(WS)/.fetched-other
WS_TEST := $(WS)/test_set
WS_TESTSET ?= $(WS_TEST)
WS_ANCHOR ?=
BLOCKS_DATA := data/cogsci22_blocks/.fetched
WS_REPORT := results/worldsense/test_set/report.txt
WS_OTHER_REPORTS := $(patsubst %,results/worldsense/other_tests/%/report.txt,memorisation ood-size ood-query ood-problem)
WS_CODE := scripts/analyse_results.py $(wildcard common/worldsense/*.py) common/stats.py

# ---- user-facing targets ---------------------------------------------------------------------
.PHONY: help all env data data-worldsense-other test test-all lint format clean \
	analyse-worldsense analyse-worldsense-other bench-worldsense

## List the targets with one line each.
help:
	@echo "Targets (DATA_MIRROR=<dir> reads external data from a local mirror instead of the network):"
	@awk '/^## /{doc=substr($$0,4); next} doc && /^[a-zA-Z0-9_.-]+:/ {sub(/:.*/,""); printf "  %-24s %s\n", $$0, doc; doc=""}' $(MAKEFILE_LIST)

## Reproduce the published numbers and run the built-in baselines (offline with DATA_MIRROR).
all: data $(WS_TEST)/results/basic___random___results.jsonl.done $(WS_REPORT)
	cat $(WS_REPORT)

## Create the virtual environment .venv from requirements.txt (done automatically when needed).
env: $(ENV_OK)

## Fetch the external data: all five WorldSense test sets, its training sets, the CogSci 2022 blocks release.
data: $(WS_CORE) $(BLOCKS_DATA) $(WS_OTHER)

## Fetch the four other WorldSense test sets (memorisation, ood-*); offline, a warning (not in the mirror).
data-worldsense-other: $(WS_OTHER)

## Run the fast tests and the linter (offline, a few minutes).
test: lint $(WS_CORE) $(BLOCKS_DATA)
	$(PYTHON) -m pytest -m "not slow and not integration"

## Run every test, including the slow and integration ones.
test-all: lint $(WS_CORE) $(BLOCKS_DATA)
	$(PYTHON) -m pytest

## Check the code with ruff.
lint: $(ENV_OK)
	$(PYTHON) -m ruff check --output-format concise common scripts tests

## Fix what ruff can fix automatically.
format: $(ENV_OK)
	$(PYTHON) -m ruff check --fix common scripts tests

## Delete generated problems and analysis outputs (never downloads, model results or the response cache).
clean:
	rm -rf .pytest_cache .ruff_cache .cache/worldsense results/worldsense
	rm -f results/blocks/*.csv results/blocks/*/baselines.txt
	find . -name __pycache__ -not -path './$(VENV)/*' -prune -exec rm -rf {} +

# ---- environment -----------------------------------------------------------------------------
$(ENV_OK): requirements.txt pyproject.toml
	$(PYTHON_SYS) -c 'import sys; sys.exit(sys.version_info < (3, 11) and "Python 3.11 or newer is needed: make PYTHON_SYS=python3.11")'
	$(PYTHON_SYS) -m venv $(VENV)
	$(PYTHON) -m pip install --quiet --disable-pip-version-check -r requirements.txt -e .
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
# Results files are append-only raw data; the .done stamp marks a run that finished.
$(WS_TEST)/results/basic___random___results.jsonl.done: $(WS_CORE) scripts/test_random_model.py
	$(PYTHON) scripts/test_random_model.py -t $(WS_TEST)
	touch $@

# The published tables (plus the random model's row), rebuilt when the data, a results file or
# the analysis code changes, written atomically to the report file (`all` prints it every time).
$(WS_REPORT): $(WS_CORE) $(WS_TEST)/results/basic___random___results.jsonl.done $(WS_CODE)
	$(PYTHON) scripts/analyse_results.py -t $(WS_TEST) --out $@ > /dev/null

## Print the accuracy and bias tables of a WorldSense test set (WS_TESTSET=<dir>, default the official one).
analyse-worldsense: $(WS_CORE)
	$(PYTHON) scripts/analyse_results.py -t $(WS_TESTSET)

## Print and save the tables of the four other WorldSense test sets (their data needs the network once).
analyse-worldsense-other: $(WS_OTHER_REPORTS)

results/worldsense/other_tests/%/report.txt: $(WS_OTHER) $(WS_CODE)
	$(PYTHON) scripts/analyse_results.py -t $(WS)/other_tests/$* --out $@

## Time the WorldSense analysis, cold and cached, against the release's script (WS_ANCHOR=<dir>).
bench-worldsense: $(WS_CORE)
	$(PYTHON) scripts/bench_worldsense.py -t $(WS_TEST) $(if $(WS_ANCHOR),--anchor $(WS_ANCHOR),)

# ---- blocks ----------------------------------------------------------------------------------
# Problem sets: data/blocks/<set>/problems/ from configs/blocks/<set>.yaml (manifest.json is the
# stamp, written last). Prompts: data/blocks/<set>/prompts/<prompting>___<type>___<view>.jsonl
# for every view of the set (.done stamp). `released` holds the prompts of the release's own
# problems with its BFS plans as examples: the paper's prompts, up to the order of stacks.
BLOCKS_COMMON := $(wildcard common/blocks/*.py)
BLOCKS_RELEASED := data/cogsci22_blocks/dataset/simple_stack/problems
BLOCKS_SETS := cogsci_problems scaling
BLOCKS_PROMPTS := data/blocks/released/prompts/.done $(foreach s,$(BLOCKS_SETS),data/blocks/$(s)/prompts/.done)
BLOCKS_PROMPT_TYPES := nl pddl

.PHONY: reproduce-blocks blocks-problems blocks-prompts blocks-baselines bench-blocks clean-blocks
all: reproduce-blocks blocks-prompts blocks-baselines
clean: clean-blocks

## Re-score the paper's released blocks-world outputs: published table, strict, baselines, CIs, McNemar.
reproduce-blocks: $(BLOCKS_DATA)
	$(PYTHON) scripts/reproduce_blocks.py --release data/cogsci22_blocks \
	    --summary results/blocks/cogsci22_reproduced.csv --per-problem results/blocks/cogsci22_rescored.csv

## Generate the blocks-world problem sets of configs/blocks/ (the paper's spec and the new sets).
blocks-problems: $(foreach s,$(BLOCKS_SETS),data/blocks/$(s)/problems/manifest.json)

## Write the few-shot planning and translation prompts of every blocks-world set and view.
blocks-prompts: $(BLOCKS_PROMPTS)

## Run the built-in models on the blocks prompts (noop, random, oracle plan; rules translates) and print scores.
blocks-baselines: results/blocks/cogsci_problems/baselines.txt
	cat $<

## Time the blocks planners and generator against pyperplan's BFS (installs pyperplan into .venv).
bench-blocks: $(VENV)/.bench-ok
	$(PYTHON) scripts/bench_blocks.py

## Delete the generated blocks-world problems and prompts (never the release or model results).
clean-blocks:
	rm -rf data/blocks

data/blocks/%/problems/manifest.json: configs/blocks/%.yaml scripts/generate_problems.py $(BLOCKS_COMMON) \
		configs/blocks/vocab/items.yaml configs/blocks/vocab/weird.yaml $(BLOCKS_DATA)
	$(PYTHON) scripts/generate_problems.py --specs-file $< --problem-path $(@D)

data/blocks/%/prompts/.done: data/blocks/%/problems/manifest.json scripts/generate_prompts.py $(BLOCKS_COMMON)
	for view in $$($(PYTHON) -c 'import json, sys; print(*json.load(open(sys.argv[1]))["views"])' $<); do \
	  for type in $(BLOCKS_PROMPT_TYPES); do \
	    $(PYTHON) scripts/generate_prompts.py --problem-path $(<D) --view $$view --prompt-type $$type \
	        --output $(@D)/paper___$${type}___$$view.jsonl; \
	  done; \
	done
	touch $@

data/blocks/released/prompts/.done: $(BLOCKS_DATA) scripts/generate_prompts.py $(BLOCKS_COMMON)
	for view in one two all; do \
	  for type in $(BLOCKS_PROMPT_TYPES); do \
	    $(PYTHON) scripts/generate_prompts.py --problem-path $(BLOCKS_RELEASED) --plans-dir $(BLOCKS_RELEASED)/plans \
	        --view $$view --prompt-type $$type --output $(@D)/paper___$${type}___$$view.jsonl; \
	  done; \
	done
	touch $@

# One results file per view and model under results/blocks/<set>/<type>___<view>/ (append-only:
# a rerun asks nothing again and re-scores the recorded answers); the summaries are the target.
results/blocks/%/baselines.txt: data/blocks/%/prompts/.done scripts/lm_plan.py scripts/codex_translate.py \
		$(BLOCKS_COMMON) $(wildcard common/models/*.py)
	mkdir -p $(@D)
	for view in $$($(PYTHON) -c 'import json, sys; print(*json.load(open(sys.argv[1]))["views"])' \
	    data/blocks/$*/problems/manifest.json); do \
	  for model in noop random oracle; do \
	    $(PYTHON) scripts/lm_plan.py --model $$model --prompts data/blocks/$*/prompts/paper___nl___$$view.jsonl; \
	  done; \
	  $(PYTHON) scripts/codex_translate.py --model rules --prompts data/blocks/$*/prompts/paper___pddl___$$view.jsonl; \
	done > $@.tmp
	mv $@.tmp $@

$(VENV)/.bench-ok: requirements-bench.txt | $(ENV_OK)
	$(PYTHON) -m pip install --quiet --disable-pip-version-check -r requirements-bench.txt
	touch $@

# ---- models (model access: configs/models/, common/models/, scripts/ask_model.py) ---------------
.PHONY: test-engine bench-models
ENGINE_OK := $(VENV)/.engine-ok

## Test the runner against a real llama.cpp server on a tiny model (first run builds llama.cpp, ~6 min).
test-engine: $(ENGINE_OK) $(WS_CORE)
	$(PYTHON) -m pytest -m integration -s tests/models/test_models_engine.py

## Benchmark the model runner against bare requests.post loops on a local server (prints rates).
bench-models: $(ENV_OK)
	$(PYTHON) scripts/bench_runner.py

# llama-cpp-python builds from source; GGML_NATIVE=OFF makes a build that runs on any x86-64 CPU.
$(ENGINE_OK): requirements-engine.txt | $(ENV_OK)
	CMAKE_ARGS="-DGGML_NATIVE=OFF" $(PYTHON) -m pip install --disable-pip-version-check -r requirements-engine.txt
	touch $@

# ---- canvas ----------------------------------------------------------------------------------
# Trial sets: data/canvas/<set>/trials.jsonl.bz2 (written last, after manifest.json) from
# configs/canvas/<set>.yaml. Models answer into data/canvas/<set>/results/ (ask_model.py; raw
# data, never deleted). The built-in baselines run on a copy of the trials under
# results/canvas/<set>/baselines/, rebuilt from scratch, so a regenerated set never meets stale answers.
CANVAS_COMMON := $(wildcard common/canvas/*.py common/canvas/tasks/*.py)
CANVAS_SETS := $(patsubst configs/canvas/%.yaml,%,$(wildcard configs/canvas/*.yaml))

.PHONY: canvas-trials canvas-baselines clean-canvas
all: canvas-baselines
clean: clean-canvas

## Generate the canvas trial sets of configs/canvas/ (data/canvas/<set>/trials.jsonl.bz2 + manifest.json).
canvas-trials: $(foreach s,$(CANVAS_SETS),data/canvas/$(s)/trials.jsonl.bz2)

## Run the built-in models (random, oracle) on the standard canvas set and print both scorers' tables.
canvas-baselines: results/canvas/standard/baselines.txt
	cat $<

## Delete the generated canvas trials and baseline runs (never data/canvas/<set>/results/).
clean-canvas:
	rm -f $(foreach s,$(CANVAS_SETS),data/canvas/$(s)/trials.jsonl.bz2 data/canvas/$(s)/manifest.json)
	rm -rf results/canvas

data/canvas/%/trials.jsonl.bz2: configs/canvas/%.yaml scripts/generate_canvas.py $(CANVAS_COMMON) | $(ENV_OK)
	$(PYTHON) scripts/generate_canvas.py $< --out $(@D)

results/canvas/%/baselines.txt: data/canvas/%/trials.jsonl.bz2 scripts/ask_model.py scripts/score_canvas.py \
		$(CANVAS_COMMON) $(wildcard common/models/*.py)
	rm -rf $(@D)/baselines
	mkdir -p $(@D)/baselines
	cp $< $(@D)/baselines/
	for model in random oracle; do \
	  $(PYTHON) scripts/ask_model.py -t $(@D)/baselines --model $$model --no-cache; \
	done
	$(PYTHON) scripts/score_canvas.py -t $(@D)/baselines --csv $(@D)/baselines.csv --out $@

## Already Said That runs
# The data block builds data/already_said_that/<set>/manifest.json (written last) from
# configs/already_said_that/<set>.yaml. The built-in solvers run on every set into
# results/already_said_that/<set>/direct___<model>___{results,turns}.jsonl (+ summary.json),
# rebuilt from scratch when the set or the code changes (they cost seconds); model runs
# (asat-model) are raw data: append-only, resumed, never deleted by make.
ASAT_RUN_SETS := which_is_heavier first_letters reverse_sort ambiguous_sentences distractorless mixed
ASAT_RESULTS := results/already_said_that
ASAT_CODE := scripts/already_said_that.py $(wildcard common/already_said_that/*.py) \
	$(wildcard common/models/*.py) common/results.py
ASAT_BASELINES := $(foreach s,$(ASAT_RUN_SETS),$(ASAT_RESULTS)/$(s)/direct___random___results.jsonl \
	$(ASAT_RESULTS)/$(s)/direct___oracle___results.jsonl)
ASAT_REPORT := $(ASAT_RESULTS)/report.txt
ASAT_MODEL ?= $(value MODEL)
ASAT_LIMIT ?= $(value LIMIT)

## Run random and oracle on every Already Said That set, then print the analysis (figures in results/already_said_that/figures).
asat-baselines: $(ASAT_REPORT)
	cat $<

.PHONY: asat-baselines asat-model bench-asat clean-asat-runs
all: asat-baselines
clean: clean-asat-runs

## Play a configured model on every Already Said That set: make asat-model MODEL=<config> [LIMIT=N] (resumes).
asat-model: $(foreach s,$(ASAT_RUN_SETS),data/already_said_that/$(s)/manifest.json) | $(ENV_OK)
	test -n "$(ASAT_MODEL)" || { echo "name the model: make asat-model MODEL=<config name or .yaml> [LIMIT=N]" >&2; exit 2; }
	for set in $(ASAT_RUN_SETS); do \
	  $(PYTHON) scripts/already_said_that.py --set $$set --model $(ASAT_MODEL) $(if $(ASAT_LIMIT),--limit $(ASAT_LIMIT)); \
	done
	$(PYTHON) scripts/analyse_results.py -t $(ASAT_RESULTS) --figures $(ASAT_RESULTS)/figures

## Time the Already Said That runner: built-in solvers on every set, and over HTTP against a bare loop.
bench-asat: $(foreach s,$(ASAT_RUN_SETS),data/already_said_that/$(s)/manifest.json) | $(ENV_OK)
	$(PYTHON) scripts/bench_already_said_that.py

## Delete the built-in solvers' Already Said That runs and the analysis (never a model's runs).
clean-asat-runs:
	rm -f $(ASAT_RESULTS)/*/direct___random___* $(ASAT_RESULTS)/*/direct___oracle___* $(ASAT_REPORT)
	rm -rf $(ASAT_RESULTS)/figures

$(ASAT_RESULTS)/%/direct___random___results.jsonl: data/already_said_that/%/manifest.json $(ASAT_CODE) | $(ENV_OK)
	rm -f $(@D)/direct___random___*
	$(PYTHON) scripts/already_said_that.py --set $(<D) --model random --loglevel WARNING

$(ASAT_RESULTS)/%/direct___oracle___results.jsonl: data/already_said_that/%/manifest.json $(ASAT_CODE) | $(ENV_OK)
	rm -f $(@D)/direct___oracle___*
	$(PYTHON) scripts/already_said_that.py --set $(<D) --model oracle --loglevel WARNING

$(ASAT_REPORT): $(ASAT_BASELINES) scripts/analyse_results.py $(ASAT_CODE)
	$(PYTHON) scripts/analyse_results.py -t $(ASAT_RESULTS) --figures $(ASAT_RESULTS)/figures --quiet --out $@.tmp
	mv $@.tmp $@

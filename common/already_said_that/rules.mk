# Already Said That in the Makefile: WordNet for nltk, offline (Debian's packages copied into
# data/nltk_data; the stamp holds the sorted word list's SHA-256), before any set is generated;
# the sets named original_* use the original eval's data from the evals==3.0.1.post1 wheel (PyPI,
# downloaded once, or $DATA_MIRROR/already_said_that_original/).
ASAT_WORDNET := data/nltk_data/.wordnet-ok
ASAT_ORIGINAL := data/already_said_that_original/report.json
GENERATE_NEEDS_already_said_that := $(ASAT_WORDNET)
TEST_DATA += $(ASAT_WORDNET)
DATA_TARGETS += $(ASAT_ORIGINAL)

.PHONY: asat-original bench-asat

$(ASAT_WORDNET): scripts/setup_wordnet.py common/already_said_that/wordnet.py | $(ENV_OK)
	$(PYTHON) scripts/setup_wordnet.py

$(ASAT_ORIGINAL): configs/data/already_said_that_original.sha256 scripts/fetch_already_said_that_original.py \
		common/already_said_that/original.py common/already_said_that/distractors.py \
		common/already_said_that/winograd.py | $(ENV_OK)
	$(PYTHON) scripts/fetch_already_said_that_original.py

ASAT_ORIGINAL_SETS := $(foreach s,$(filter original_%,$(SETS_already_said_that)),data/already_said_that/$(s)/.generated)
$(ASAT_ORIGINAL_SETS): $(ASAT_ORIGINAL)

## Get the original eval's data and texts from its pinned wheel (PyPI, once) and build the original_* sets.
asat-original: $(ASAT_ORIGINAL) $(ASAT_ORIGINAL_SETS)

# A model asked a set of `wording: original` (the original_* sets) reads the original's texts
# from the wheel (the built-in baselines read none).
ASAT_TEXTS := $(if $(shell grep -l '^wording: *original' $(patsubst %,configs/already_said_that/%.yaml,\
	$(DEFAULT_SETS_already_said_that))),$(ASAT_ORIGINAL))
$(call model_run,already_said_that): | $(ASAT_TEXTS)

## Time the Already Said That runner: built-in solvers on every set, and over HTTP against a bare loop.
bench-asat: $(foreach s,$(DEFAULT_SETS_already_said_that),data/already_said_that/$(s)/.generated) | $(ENV_OK)
	$(PYTHON) bench/bench_already_said_that.py

# The original's plots (its make_plots.py) from every run on the original_* sets: the figure,
# numbers.csv and numbers.txt in results/already_said_that/paper/. With MODEL=<config> the model
# plays those five sets first (each: seeds 1-3, 250 conversations each; PROMPTING=cot or hhh as the
# original's chain-of-thought and base-model solvers; LIMIT, SET, BATCH as for every model step),
# then a sub-make without MODEL draws (a model step of every default set is not wanted here).
PROMPTING ?=
ASAT_PAPER_SETS := $(filter original_%,$(DEFAULT_SETS_already_said_that))
ASAT_PAPER := results/already_said_that/paper/numbers.csv
ASAT_PAPER_RUN := $(if $(MODEL),results/runs/already_said_that/paper-$(MODEL_TAG)$(if $(PROMPTING),-$(PROMPTING)).done)
CLEAN_FILES += $(dir $(ASAT_PAPER))
.PHONY: asat-paper

## Draw the original eval's plots (each metric by variant and model, mean over seeds +- SE); MODEL=<config> [PROMPTING=cot|hhh] plays its sets first.
asat-paper: $(ASAT_PAPER_RUN) | $(ENV_OK)
	$(MAKE) --no-print-directory $(ASAT_PAPER) MODEL=
	cat $(ASAT_PAPER:.csv=.txt)
	$(say_pending)

$(ASAT_PAPER): $(foreach s,$(ASAT_PAPER_SETS),results/already_said_that/$(s)/.scored) \
		scripts/already_said_that_paper.py $(CODE_report_already_said_that) | $(ENV_OK)
	$(PYTHON) scripts/already_said_that_paper.py --out $(@D) > /dev/null

ifneq ($(ASAT_PAPER_RUN),)
$(ASAT_PAPER_RUN): $(foreach s,$(ASAT_PAPER_SETS),data/already_said_that/$(s)/.generated) | $(ENV_OK)
	mkdir -p $(@D)
	pending=0; for set in $(ASAT_PAPER_SETS); do \
	  $(PYTHON) scripts/already_said_that.py -t already_said_that/$$set $(MODEL_ARGS) \
	    $(if $(PROMPTING),--prompting $(PROMPTING)) $(past_batch); \
	done; \
	if [ $$pending = 75 ]; then touch $(@:.done=.pending); echo "batches are out ($(@:.done=.pending)):" \
	  "run the same make command again to collect them"; else rm -f $(@:.done=.pending); touch $@; fi
endif

# Already Said That in the Makefile: WordNet for nltk, offline (Debian's packages copied into
# data/nltk_data; the stamp holds the sorted word list's SHA-256), before any set is generated;
# the sets named original_* use the original eval's data from the evals==3.0.1.post1 wheel (PyPI,
# downloaded once; not default sets).
ASAT_WORDNET := data/nltk_data/.wordnet-ok
ASAT_ORIGINAL := data/already_said_that_original/report.json
GENERATE_NEEDS_already_said_that := $(ASAT_WORDNET)
TEST_DATA += $(ASAT_WORDNET)

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

# A model asked a set of `wording: original` (original_*, protocol_*) reads the original's texts
# from the wheel (the built-in baselines read none: make all stays offline).
ASAT_TEXTS := $(if $(shell grep -l '^wording: *original' $(patsubst %,configs/already_said_that/%.yaml,\
	$(DEFAULT_SETS_already_said_that))),$(ASAT_ORIGINAL))
$(call model_run,already_said_that): | $(ASAT_TEXTS)

## Time the Already Said That runner: built-in solvers on every set, and over HTTP against a bare loop.
bench-asat: $(foreach s,$(DEFAULT_SETS_already_said_that),data/already_said_that/$(s)/.generated) | $(ENV_OK)
	$(PYTHON) bench/bench_already_said_that.py

# WorldSense in the Makefile: its data is the official release (pinned SHA-256s, configs/data/),
# its one default set the test set, whose baseline is the template script's random model (as in
# the release); the four other test sets come from the network only (not in the offline mirror).
WS := data/worldsense
WS_CORE := $(WS)/.fetched-core
WS_OTHER := $(WS)/.fetched-other
DATA_STAMP_worldsense := $(WS_CORE)
DATA_TARGETS += $(WS_CORE) $(WS_OTHER)
TEST_DATA += $(WS_CORE)
BASELINES_RECIPE_worldsense := worldsense_baselines
worldsense_baselines = $(PYTHON) scripts/test_random_model.py -t $(1)/$(2)
WS_OTHER_REPORTS := $(patsubst %,results/worldsense/other_tests/%/report.txt,memorisation ood-size ood-query ood-problem)

.PHONY: data-worldsense-other analyse-worldsense-other bench-worldsense

$(WS_CORE): configs/data/worldsense.yaml configs/data/worldsense.sha256 | $(ENV_OK)
	$(PYTHON) scripts/fetch_data.py $< --group test_set training_set --stamp $@

# Offline (not in the mirror) this warns and writes a stamp saying so: make is done with it.
$(WS_OTHER): configs/data/worldsense.yaml configs/data/worldsense.sha256 | $(ENV_OK)
	$(PYTHON) scripts/fetch_data.py $< --group other_tests --skip-offline --stamp $@

## Fetch the four other WorldSense test sets (memorisation, ood-*) again (they need the network).
data-worldsense-other: | $(ENV_OK)
	rm -f $(WS_OTHER)
	$(MAKE) --no-print-directory $(WS_OTHER)

## Print and save the tables of the four other WorldSense test sets (their data needs the network once).
analyse-worldsense-other: $(WS_OTHER_REPORTS)

results/worldsense/other_tests/%/report.txt: $(WS_OTHER) $(CODE_score_worldsense) $(CODE_report_worldsense)
	test -d $(WS)/other_tests/$* || { echo "error: no test set $(WS)/other_tests/$*: the other WorldSense" \
	  "test sets are not in the offline mirror; fetch them once with network: make data-worldsense-other" >&2; exit 2; }
	$(PYTHON) scripts/analyse_results.py -t $(WS)/other_tests/$* --out $@

## Time the WorldSense analysis against the release's script (WS_ANCHOR=<dir>).
bench-worldsense: $(WS_CORE)
	$(PYTHON) bench/bench_worldsense.py $(if $(WS_ANCHOR),--anchor $(WS_ANCHOR),)
WS_ANCHOR ?=

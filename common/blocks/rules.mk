# Blocks in the Makefile: the CogSci 2022 release (problems, prompts, raw model outputs; pinned
# SHA-256s) is needed to generate a set (its vocabulary); its answers are scored for the paper's
# table (as runs of the set `released`), and re-scored for the printed reproduction.
BLOCKS_DATA := data/cogsci22_blocks/.fetched
BLOCKS_REPRODUCED := results/blocks/cogsci22_reproduced.txt
GENERATE_NEEDS_blocks := $(BLOCKS_DATA) configs/blocks/vocab/items.yaml configs/blocks/vocab/weird.yaml
DATA_TARGETS += $(BLOCKS_DATA)
TEST_DATA += $(BLOCKS_DATA)
REPORT_INPUTS += $(BLOCKS_REPRODUCED)
CLEAN_FILES += results/blocks/cogsci22_* data/blocks/released

.PHONY: reproduce-blocks bench-blocks

$(BLOCKS_DATA): configs/data/cogsci22_blocks.yaml configs/data/cogsci22_blocks.sha256 | $(ENV_OK)
	$(PYTHON) scripts/fetch_data.py $< --stamp $@

## Re-score the paper's released blocks-world outputs: published table, strict, baselines, CIs, McNemar.
reproduce-blocks: $(BLOCKS_REPRODUCED)
	cat $<

# the printed tables, and beside them the summary and per-problem CSV files
$(BLOCKS_REPRODUCED): $(BLOCKS_DATA) scripts/reproduce_blocks.py common/blocks/reproduce.py common/blocks/release.py \
		$(CODE_score_blocks) $(CODE_report_blocks)
	mkdir -p $(@D)
	tmp=$$(mktemp $@.XXXXXX.tmp); trap 'rm -f "$$tmp"' EXIT; \
	$(PYTHON) scripts/reproduce_blocks.py --release data/cogsci22_blocks \
	    --summary results/blocks/cogsci22_reproduced.csv --per-problem results/blocks/cogsci22_rescored.csv > "$$tmp"; \
	mv "$$tmp" $@

# The release's answers scored like any run: the set `released` (the paper's prompts for the
# release's own problems, data/blocks/released) gets them as results files, which the score stage
# scores into the results database; the paper's sets show the paper's table from those rows.
BLOCKS_RELEASED := results/blocks/released/.scored
$(BLOCKS_RELEASED): $(BLOCKS_DATA) scripts/reproduce_blocks.py common/blocks/release_runs.py $(SCORE_CODE) \
		$(CODE_score_blocks) | $(ENV_OK)
	$(PYTHON) scripts/reproduce_blocks.py --runs
	$(PYTHON) scripts/score_results.py -t data/blocks/released
	touch $@
results/blocks/cogsci_problems/report.txt: $(BLOCKS_RELEASED)

## Time the blocks planners and generator against pyperplan's BFS (installs pyperplan into .venv).
bench-blocks: $(BENCH_OK)
	$(PYTHON) bench/bench_blocks.py

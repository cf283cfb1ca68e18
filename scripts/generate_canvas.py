"""Generate a canvas trial set from a config: <out>/trials.jsonl.bz2 and <out>/manifest.json.

The manifest holds the resolved config, the counts per task and answer, and the requests that
were skipped (with the reason). Same config and seed, same bytes.

$ python scripts/generate_canvas.py configs/canvas/standard.yaml --out data/canvas/standard
$ python scripts/generate_canvas.py configs/canvas/standard.yaml --out /tmp/small --set items=4 --set seed=7
"""

try:  # first: scripts/_project_env.py puts the project on sys.path and explains a missing .venv
    import _project_env  # noqa: F401
except ModuleNotFoundError:  # a copy of this script outside scripts/: the installed package serves
    pass

import logging
import sys
import time
from collections import Counter
from pathlib import Path

from common import cli
from common.canvas.generate import check_every_task_runs, generate_set, load_config, summary
from common.config import parse_overrides
from common.jsonl import write_json, write_jsonl

log = logging.getLogger("generate_canvas")


def main(argv: list[str] | None = None) -> int:
    parser = cli.make_parser(__doc__)
    parser.add_argument("config", help="YAML config of the set (configs/canvas/<set>.yaml)")
    parser.add_argument("--out", required=True, type=Path, help="output directory of the set")
    parser.add_argument("--plain", action="store_true", help="write trials.jsonl instead of .jsonl.bz2")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a config setting (repeatable), e.g. --set items=4",
    )
    args = parser.parse_args(argv)
    cli.setup_logging(args.loglevel)

    cfg = load_config(args.config, parse_overrides(args.set))
    log.info(
        "%s: seed %d, %s items per (task, size), sizes %s, tasks %s, fewshot %s",
        args.config,
        cfg.seed,
        cfg.items,
        cfg.num_shapes,
        ", ".join(cfg.tasks),
        ", ".join(cfg.fewshot),
    )
    start = time.monotonic()
    built = generate_set(cfg)
    manifest = summary(cfg, built, cfg.seed)
    check_every_task_runs(cfg, manifest, args.config)  # before anything is written
    trials_file = args.out / ("trials.jsonl" if args.plain else "trials.jsonl.bz2")
    trials_file.unlink(missing_ok=True)  # an old set's trials never stand beside the new manifest
    write_json(args.out / "manifest.json", manifest)  # first: the trials file marks a finished set
    write_jsonl(trials_file, built.trials)
    totals: Counter = Counter()
    for skipped in manifest["skipped"]:
        totals[(skipped["task"], skipped["num_shapes"], skipped["reason"])] += skipped["count"]
    for (task, n, reason), count in totals.items():
        log.warning("skipped %d: %s, %d shapes: %s (details in manifest.json)", count, task, n, reason)
    for entry in manifest["not_run"]:
        log.warning(
            "%s does not run with %d shapes: %s",
            entry["task"],
            entry["num_shapes"],
            "; ".join(entry["reasons"]),
        )
    log.info(
        "wrote %s trials (%s items) to %s in %.1f s; %s requests skipped",
        f"{len(built.trials):,}",
        f"{built.items:,}",
        trials_file,
        time.monotonic() - start,
        f"{manifest['skipped_total']:,}",
    )
    return 0


if __name__ == "__main__":
    sys.exit(cli.run_main(main))

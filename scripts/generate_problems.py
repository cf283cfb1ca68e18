"""Generate a blocks-world problem set from a spec file: one JSON file per problem + manifest.json.

The spec file is a YAML list of problem entries (as the paper's cogsci_problems.yaml) or a
mapping of set settings with a `problems` list; see common/blocks/README.md.

$ python scripts/generate_problems.py --specs-file configs/blocks/cogsci_problems.yaml \\
      --problem-path data/blocks/cogsci_problems/problems
$ python scripts/generate_problems.py --specs-file configs/blocks/scaling.yaml \\
      --problem-path /tmp/scaling_seed3/problems --seed 3
"""

try:  # first: scripts/_project_env.py puts the project on sys.path and explains a missing .venv
    import _project_env  # noqa: F401
except ModuleNotFoundError:  # a copy of this script outside scripts/: the installed package serves
    pass

import logging
import sys
from collections import Counter

from common import cli
from common.blocks.generate import generate_set, load_spec
from common.blocks.problems import write_problems
from common.errors import ConfigError

log = logging.getLogger("generate_problems")


def main(argv: list[str] | None = None) -> int:
    parser = cli.make_parser(__doc__)
    parser.add_argument("--specs-file", required=True, help="YAML spec of the problem set")
    parser.add_argument("--problem-path", required=True, help="output directory (problem_<id>.json files)")
    parser.add_argument("--seed", type=int, default=None, help="random seed (default: the spec's `seed`)")
    args = parser.parse_args(argv)
    cli.setup_logging(args.loglevel)

    spec = load_spec(args.specs_file)
    seed = spec.seed if args.seed is None else args.seed
    log.info(
        "%s: %s entries, generator %s, views %s, seed %d",
        args.specs_file,
        len(spec.problems),
        spec.generator,
        ", ".join(v.name for v in spec.views),
        seed,
    )
    try:
        problems = generate_set(spec, seed)
    except ConfigError as exc:  # e.g. a problem over plan_budget: name the spec file too
        raise ConfigError(f"{args.specs_file}: {exc}") from None
    manifest = write_problems(
        args.problem_path,
        problems,
        {
            "spec_file": args.specs_file,
            "seed": seed,
            "generator": spec.generator,
            "views": [view.name for view in spec.views],
            **({"modalities": spec.modality} if spec.modality != ["text"] else {}),
        },
    )
    trivial = Counter(
        view for p in problems if p.test for view, held in p.extra["trivial_goal"].items() if held
    )
    tests = sum(p.test for p in problems)
    log.info(
        "wrote %s problems (%s test) to %s; goals already holding in test problems: %s",
        f"{len(problems):,}",
        f"{tests:,}",
        manifest.parent,
        ", ".join(f"{v} {trivial[v]}" for v in (v.name for v in spec.views)),
    )
    return 0


if __name__ == "__main__":
    sys.exit(cli.run_main(main))

"""Write the Makefile's view of the suites (.make/suites.mk): their sets and each stage's code.

The Makefile includes what this prints: the suites of ``common/suites.py``, each one's sets
(every configs/<suite>/<set>.yaml, and the sets it fetches), its default sets (every set whose
config does not say ``default: false``), the scripts that ask a model, and for each stage
(generate, run, score, report) the project files that stage's modules import
(``common/codedeps.py``), so that a change to a report module rebuilds reports only, and a change
to a scorer rescoring only. Runs with the standard library alone (make reads it before .venv
exists).

With --builtins it prints instead, per suite, the built-in models a model step of that suite can
run (``BUILTINS_<suite>``: a name every script of the suite answers, itself or through its
counterpart, as blocks' translator answers ``oracle`` with ``oracle-facts``) and every name of
its registry (``BUILTIN_NAMES_<suite>``), which the Makefile checks MODEL against; that needs
.venv's python (it imports the suites' registries).

$ python scripts/make_suites.py > .make/suites.mk   # make runs it with the system python3
$ .venv/bin/python scripts/make_suites.py --builtins > .make/builtins.mk
"""

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the project, without .venv

from common import codedeps, paths, suites
from common.suite import STAGES, Suite

NOT_DEFAULT = re.compile(r"^default:\s*(false|no|off)\s*(#.*)?$", re.MULTILINE | re.IGNORECASE)


def is_default(suite: Suite, name: str) -> bool:
    """Return whether the set ``name`` is a default set: a fetched set, or a config that does not
    say ``default: false`` (read with a regular expression: no YAML parser at this point)."""
    config = suite.config_dir() / f"{name}.yaml"
    return not config.is_file() or not NOT_DEFAULT.search(config.read_text(encoding="utf-8"))


def lines(suite: Suite) -> list[str]:
    """Return the Makefile variables of one suite."""
    name = suite.name
    sets = suite.set_names()
    out = [
        f"SETS_{name} := {' '.join(sets)}",
        f"DEFAULT_SETS_{name} := {' '.join(s for s in sets if is_default(suite, s))}",
        f"FETCHED_SETS_{name} := {' '.join(suite.fetched_sets)}",
        f"RUN_SCRIPTS_{name} := {' '.join(suite.run_scripts)}",
        f"SCOPE_{name} := {suite.section_scope}",
        f"RESULTS_IN_DATA_{name} := {'yes' if suite.results_in_data else ''}",
        # what the suite's rules.mk may set (included after this file)
        f"GENERATE_NEEDS_{name} :=",
        f"DATA_STAMP_{name} :=",
        f"BASELINES_RECIPE_{name} := baselines_recipe",
        f"ANALYSIS_NEEDS_{name} :=",  # a function of the set: what its analysis reads beside the scores
    ]
    for stage in STAGES:
        files = codedeps.closure(suite.stage_modules(stage)) if suite.stage_modules(stage) else []
        out.append(f"CODE_{stage}_{name} := " + " ".join(paths.shown(f) for f in files))
    for part, reference in suite.extra.items():  # a suite's own stages (canvas: its audit)
        files = codedeps.closure([reference.partition(":")[0]])
        out.append(f"CODE_{part}_{name} := " + " ".join(paths.shown(f) for f in files))
    return out


def builtins(suite: Suite) -> list[str]:
    """Return the built-in models of ``suite`` that every one of its scripts answers: a model of no
    task in particular, or one whose task's counterpart (``counterpart``) answers each other task
    of the registry (blocks: plans and PDDL facts)."""
    from common.models.resolve import counterpart  # needs .venv (the registries import numpy, ...)

    registry = suite.part("baselines")
    tasks = sorted({task for factory in registry.values() if (task := getattr(factory(0), "task", None))})

    def answers(name: str, task: str) -> bool:
        found = counterpart(name, registry, task)
        return found in registry and getattr(registry[found](0), "task", None) in (None, task)

    return [name for name in registry if all(answers(name, task) for task in tasks)]


def main(argv: list[str] | None = None) -> int:
    formatter = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=formatter)
    parser.add_argument(
        "--builtins", action="store_true", help="print each suite's built-in models a model step runs"
    )
    if parser.parse_args(argv).builtins:
        print("# written by scripts/make_suites.py --builtins: each suite's built-ins (its steps', all)")
        for suite in suites.all_suites():
            print(f"BUILTINS_{suite.name} := {' '.join(builtins(suite))}")
            print(f"BUILTIN_NAMES_{suite.name} := {' '.join(suite.part('baselines'))}")
        return 0
    print("# written by scripts/make_suites.py: the suites, their sets and each stage's code")
    print(f"SUITES := {' '.join(suites.names())}")
    for suite in suites.all_suites():
        print("\n".join(lines(suite)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

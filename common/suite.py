"""What a suite is to the shared layer: one ``Suite`` object, exported by its package as ``SUITE``.

The shared layer (the scripts that ask models, the scoring into the results database, the
analysis entry point, the report, the stale-results check, the Makefile's code lists) knows a
suite only through this object; ``common.suites`` lists the suites. Every suite has the same
rooms, so each part is found in the same module of every suite (``PARTS``: the part, its
module and attribute in the suite's package, whether a suite must have it):

- ``generate`` (generated suites): ``generate.generate(ref, seed, overrides) -> fingerprints``,
  writes the set's data (``ref.data``) from its config and returns each item's fingerprint per
  results subdirectory (``common.stale``);
- ``protocol``: the module ``run``, with ``items(ref, limit)`` and ``answer(model, item, ...)``
  that the shared runner calls; ``baselines``: ``baselines.BASELINES``, the built-in models;
  ``ask``: ``ask.ask_set(ref, argv) -> exit code``, the run entry point: runs the model and
  options ``argv`` names (``--model M --seed N ...``) on the set ``ref``, in this process, in
  every way the suite asks (what the suite's ``run_scripts`` do; the model template calls it);
- the score stage, ``scoring``: ``data_fingerprint(ref)`` (changes when the set's data does),
  ``results_files(ref)``, ``items_frame(ref) -> DataFrame``, ``score_file(ref, file, items) ->
  ScoredRun``, ``pairs(runs, units) -> [(run a, run b, rule)]`` (the paired tests of a set's
  runs) and ``detect(path)`` (whether a directory is one of its sets);
- the report, ``report``: ``section(refs, scored, figures_dir) -> Section`` and ``QUERIES``, the
  explorer's canned queries.

A declaration says only what differs: a part given as ``"module:attribute"`` (absolute, e.g. the
shared ``common.trials.baselines:BASELINES``; or ``None`` for a part the suite has not) replaces
the convention. Every part is checked when the suite is declared, by reading its module's source
(not importing it: each stage's import closure stays that stage's code): a reference to a module
or attribute that is not there raises ConfigError naming the suite and the field, at once, not
when that stage first runs.

A *set* is a ``SetRef``: the suite, the set's name, where its data is, where its results go, and
its config (``configs/<suite>/<set>.yaml``) when it is generated.
"""

from __future__ import annotations

import ast
import functools
import importlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from common import codedeps, paths
from common.errors import ConfigError

STAGES = ("generate", "run", "score", "report")  # the Makefile's code lists, one per stage

# part: (its "module:attribute" in the suite's package, whether every suite has it)
PARTS = {
    "generate": ("generate:generate", False),  # none: the suite's sets are fetched
    "protocol": ("run", True),
    "baselines": ("baselines:BASELINES", True),
    "ask": ("ask:ask_set", True),
    "fingerprint": ("scoring:data_fingerprint", True),
    "results_files": ("scoring:results_files", True),
    "items": ("scoring:items_frame", True),
    "score": ("scoring:score_file", True),
    "pairs": ("scoring:pairs", False),
    "detect": ("scoring:detect", False),
    "section": ("report:section", True),
    "queries": ("report:QUERIES", False),
}
CONVENTION = object()  # a part's default: where every suite keeps it (``PARTS``)


@dataclass(frozen=True)
class SetRef:
    """One set of one suite: where its data is, where answers to it go."""

    suite: str  # the suite's name
    name: str  # the set's name, e.g. "standard"
    data: Path  # data/<suite>/<set>/ (generated or fetched)
    results: Path  # where results files go (results/<suite>/<set>/; WorldSense: <data>/results/)
    config: Path | None = None  # configs/<suite>/<set>.yaml for a generated set

    @property
    def key(self) -> str:
        """Return ``<suite>/<set>``: how make and messages name the set."""
        return f"{self.suite}/{self.name}"

    def __repr__(self) -> str:
        return f"<SetRef {self.key}>"


@dataclass(frozen=True)
class Suite:
    """A suite as the shared layer sees it (see the module docstring)."""

    name: str  # the package name under common/, e.g. "canvas"
    title: str  # e.g. "Canvas"
    unit: str  # the unit of its statistics and paired tests, e.g. "item (its variants ...)"
    headline: str  # what an answer's ``correct`` means (its headline rule)
    answer_row: str = ""  # what one answer is, when the unit holds several (e.g. "trial"); "": a unit
    rules: tuple[str, ...] = ()  # other rules and measures scored per answer (the ``scores`` table)
    run_scripts: tuple[str, ...] = ()  # scripts/ that ask a model (make runs each with --baselines)
    record_fields: tuple[str, ...] = ()  # fields every record of its results files has (what wrote a file)
    # the parts (``PARTS``): the convention unless given ("module:attribute", or None for none);
    # after the check, each is its absolute reference, or "" when the suite has none
    detect: Any = CONVENTION  # "module:function(path) -> bool": whether a directory is one of its sets
    protocol: Any = CONVENTION  # module with items(ref, limit) and answer(model, item, ...)
    baselines: Any = CONVENTION  # "module:BASELINES"
    ask: Any = CONVENTION  # "module:ask_set(ref, argv) -> exit code": runs a model on one of its sets
    generate: Any = CONVENTION  # "module:generate"; None for a suite whose sets are fetched
    fingerprint: Any = CONVENTION  # "module:data_fingerprint(ref) -> str": changes with the set's data
    results_files: Any = CONVENTION  # "module:results_files(ref) -> [Path]": the set's results files
    items: Any = CONVENTION  # "module:items_frame(ref) -> DataFrame": the set's items
    score: Any = CONVENTION  # "module:score_file(ref, file, items) -> ScoredRun"
    pairs: Any = CONVENTION  # "module:pairs"
    section: Any = CONVENTION  # "module:section"
    queries: Any = CONVENTION  # "module:QUERIES": the explorer's canned queries, {name: (title, about, SQL)}
    fetched_sets: tuple[str, ...] = ()  # sets that come from elsewhere (WorldSense's test sets)
    results_in_data: bool = False  # results beside the data (<data>/results/), as a release keeps them
    # its detect recognises a format other suites' sets may share, not marks of its own (a set in
    # the trial format): a directory that another suite also claims is that suite's
    detect_shared: bool = False
    section_scope: str = "set"  # "set": a report section per set; "suite": one for all default sets
    item_texts: bool = False  # its analysis reads the items' prompts (database.read(..., texts=True))
    # its analysis's own options: flag -> argparse keywords (analyse_results.py shows them under its
    # title; its section gets each by name, e.g. ``by``)
    analysis_options: dict[str, dict[str, Any]] = field(default_factory=dict)
    extra: dict[str, str] = field(default_factory=dict)  # other named parts ("module:attribute")

    def __post_init__(self) -> None:
        for part, (conventional, required) in PARTS.items():
            given = getattr(self, part)
            if given is CONVENTION:
                reference = f"common.{self.name}.{conventional}"
                found = _defined(reference) is None
                if required and not found:
                    raise ConfigError(f"suite {self.name}: {part}: {_defined(reference)}")
                object.__setattr__(self, part, reference if found else "")
            else:
                object.__setattr__(self, part, self._checked(part, given or ""))
        object.__setattr__(self, "extra", {k: self._checked(k, v) for k, v in self.extra.items()})

    def _checked(self, part: str, reference: str) -> str:
        """Return ``reference`` when it names a module (and attribute) that is there ("" always
        is: no such part); raise ConfigError naming the suite, the field and what is missing."""
        problem = _defined(reference) if reference else None
        if problem:
            raise ConfigError(f"suite {self.name}: {part}={reference!r}: {problem}")
        return reference

    def __repr__(self) -> str:
        return f"<Suite {self.name}>"

    def part(self, name: str) -> Any:
        """Return the attribute a reference of this suite names (``generate``, ``score``, ...,
        or a key of ``extra``), importing its module; raise LookupError when the suite has none."""
        reference = self.extra.get(name) or getattr(self, name, "")
        if not reference:
            raise LookupError(f"suite {self.name} has no {name}")
        module, _, attribute = reference.partition(":")
        loaded = importlib.import_module(module)
        return getattr(loaded, attribute) if attribute else loaded

    def stage_modules(self, stage: str) -> list[str]:
        """Return the modules of ``stage`` (one of STAGES), whose import closure is that stage's
        code: generation, asking (protocol, baselines and the run entry point), scoring (items,
        scorer, pairs), report."""
        names = {
            "generate": [self.generate],
            "run": [self.protocol, self.baselines, self.ask],
            "score": [self.fingerprint, self.results_files, self.items, self.score, self.pairs],
            "report": [self.section],
        }[stage]
        return list(dict.fromkeys(ref.partition(":")[0] for ref in names if ref))

    # ---- its sets -----------------------------------------------------------------------------
    @property
    def generated(self) -> bool:
        """Return whether the suite's sets are generated from configs/<suite>/<set>.yaml."""
        return bool(self.generate)

    def config_dir(self) -> Path:
        """Return configs/<suite>/, where each YAML file is a set."""
        return paths.CONFIGS / self.name

    def set_names(self) -> list[str]:
        """Return the names of its sets: the fetched ones, then one per configs/<suite>/*.yaml."""
        names = list(self.fetched_sets)
        if self.generated and self.config_dir().is_dir():
            names += sorted(p.stem for p in self.config_dir().glob("*.yaml"))
        return names

    def ref(
        self,
        name: str,
        data: Path | None = None,
        results_root: Path | None = None,
        config: Path | None = None,
    ) -> SetRef:
        """Return the SetRef of the set ``name`` (its data at ``data``, default data/<suite>/<name>;
        its results under ``results_root``, default results/<suite>/, or beside the data; its config
        ``config``, default configs/<suite>/<name>.yaml)."""
        data = Path(data) if data is not None else paths.DATA / self.name / name
        if results_root is not None:
            results = Path(results_root) / name
        elif self.results_in_data:
            results = data / "results"
        else:
            results = paths.RESULTS / self.name / name
        if config is None and self.generated:
            config = self.config_dir() / f"{name}.yaml"
        return SetRef(self.name, name, data, results, config if config and config.is_file() else None)

    def refs(self) -> list[SetRef]:
        """Return a SetRef for each of its sets (``set_names``)."""
        return [self.ref(name) for name in self.set_names()]

    def claims(self, path: Path) -> bool:
        """Return whether ``path`` may be a set directory of this suite (its ``detect``; which suite's
        it is, when several claim it: ``common.suites.claimant``)."""
        return bool(self.detect) and bool(self.part("detect")(path))


def _defined(reference: str) -> str | None:
    """Return None when ``"module:attribute"`` names a project module that defines the attribute
    at its top level (a function, class, assignment or import), else what is missing. Reads the
    module's source; imports nothing."""
    module, _, attribute = reference.partition(":")
    path = codedeps.module_file(module)
    if path is None:
        return f"no module {module} (no {module.replace('.', '/')}.py)"
    if attribute and attribute not in _top_level_names(path):
        return f"{paths.shown(path)} defines no {attribute}"
    return None


@functools.cache
def _top_level_names(path: Path) -> frozenset[str]:
    """Return the names ``path`` binds at its top level."""
    names: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8"), str(path)).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
    return frozenset(names)

"""What a suite is to the shared layer: one ``Suite`` object, exported by its package as ``SUITE``.

The shared layer (the scripts that ask models, the scoring into the results database, the
analysis entry point, the report, the stale-results check, the Makefile's code lists) knows a
suite only through this object; ``common.suites`` lists the suites. A suite names its parts by
reference (``"module:attribute"``), imported only when used, so that a suite's package
``__init__`` stays light and the import closure of each stage is what that stage reads:

- ``generate`` (generated suites): ``generate(ref, seed, overrides) -> fingerprints``, writes the set's
  data (``ref.data``) from its config and returns each item's fingerprint per results
  subdirectory (``common.stale``);
- ``protocol``: the module with ``items(ref, limit)`` and ``answer(model, item, ...)`` that the
  shared runner calls; ``baselines``: the ``BASELINES`` registry of built-in models;
- scoring: ``data_fingerprint(ref)`` (changes when the set's data does), ``results_files(ref)``,
  ``items_frame(ref) -> DataFrame`` and ``score_file(ref, file, items) -> ScoredRun``;
  ``pairs(runs, units) -> [(run a, run b, rule)]``: the paired tests of a set's runs;
- ``section`` (report): ``section(refs, scored, figures_dir) -> Section``.

A *set* is a ``SetRef``: the suite, the set's name, where its data is, where its results go, and
its config (``configs/<suite>/<set>.yaml``) when it is generated.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from common import paths

STAGES = ("generate", "run", "score", "report")  # the Makefile's code lists, one per stage


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
    rules: tuple[str, ...] = ()  # other rules and measures scored per answer (the ``scores`` table)
    run_scripts: tuple[str, ...] = ()  # scripts/ that ask a model (make runs each with --baselines)
    record_fields: tuple[str, ...] = ()  # fields every record of its results files has (what wrote a file)
    detect: str = ""  # "module:function(path) -> bool": whether a directory is one of its sets
    protocol: str = ""  # module with items(ref, limit) and answer(model, item, ...)
    baselines: str = ""  # "module:BASELINES"
    generate: str = ""  # "module:generate"; empty for a suite whose sets are fetched
    fingerprint: str = ""  # "module:data_fingerprint(ref) -> str": changes when the set's data changes
    results_files: str = ""  # "module:results_files(ref) -> [Path]": the set's results files
    items: str = ""  # "module:items_frame(ref) -> DataFrame": the set's items
    score: str = ""  # "module:score_file(ref, file, items) -> ScoredRun"
    pairs: str = ""  # "module:pairs"
    section: str = ""  # "module:section"
    queries: str = (
        ""  # "module:QUERIES": the explorer's canned queries of this suite, {name: (title, about, SQL)}
    )
    fetched_sets: tuple[str, ...] = ()  # sets that come from elsewhere (WorldSense's test sets)
    results_in_data: bool = False  # results beside the data (<data>/results/), as a release keeps them
    section_scope: str = "set"  # "set": a report section per set; "suite": one for all default sets
    item_texts: bool = False  # its analysis reads the items' prompts (database.read(..., texts=True))
    extra: dict[str, str] = field(default_factory=dict)  # other named parts ("module:attribute")

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
        code: generation, asking (protocol and baselines), scoring (items, scorer, pairs), report."""
        names = {
            "generate": [self.generate],
            "run": [self.protocol, self.baselines],
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
        """Return whether ``path`` is a set directory of this suite (its ``detect``)."""
        return bool(self.detect) and bool(self.part("detect")(path))

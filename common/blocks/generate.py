"""Problem sets from a spec file: boards, goal views, renaming, trivial-goal handling, plan lengths;
``generate`` writes a set's problems and prompts (the suite's generate stage).

A spec file is YAML: either a plain list of problem entries (the released
``cogsci_problems.yaml`` form) or a mapping of set settings (``SetSpec``) with a ``problems``
list. Each entry (``ProblemSpec``) gives the number of items, whether it is a test problem
and how many such problems to make. Each view takes the first ``constraints`` relations of one
shuffled list of the goal board's relations, so the views of a problem are nested, and applies
its own renaming rule: the number of constraints and renaming are separate factors.

Every problem has its own ``random.Random`` seeded by (set seed, index), so output does not
depend on PYTHONHASHSEED and one problem can be regenerated alone.
"""

import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

from common import config, paths
from common.blocks.boards import GENERATORS
from common.blocks.items import prompt_key
from common.blocks.picture import draw_picture, name_of
from common.blocks.planner import SearchBudgetExceeded, near_optimal_plan, optimal_length, optimal_plan
from common.blocks.problems import Problem, View, write_problems
from common.blocks.prompts import PARTS, PROMPT_TYPES, pictured_views, prompt_records
from common.blocks.state import Move, board_relations, goal_holds
from common.errors import ConfigError, DataError
from common.jsonl import write_jsonl
from common.pictures.modality import TEXT, modalities_of, shows_pictures
from common.pictures.store import save_picture
from common.suite import SetRef

PROMPTING = "paper"  # the prompt style a generated set's prompts have (other styles: generate_prompts.py)


@dataclass
class ViewSpec:
    """One goal view: its name, how many goal relations it keeps, and its renaming rule."""

    name: str
    constraints: int | Literal["all"] = "all"  # a prefix of the shuffled goal relations
    rename: Literal["none", "added", "all"] = "added"  # added: the paper's rule


@dataclass
class ProblemSpec:
    """One entry of a spec file."""

    num_obj: int  # number of items
    test: bool = False  # False: a few-shot training problem
    count: int = 1  # how many problems this entry makes
    generator: Literal["uniform", "legacy"] | None = None  # None: the set's generator


def _paper_views() -> list[ViewSpec]:
    return [ViewSpec("one", 1), ViewSpec("two", 2), ViewSpec("all", "all")]


@dataclass
class SetSpec:
    """Settings of a problem set; defaults are those of a new set."""

    problems: list[ProblemSpec]
    generator: Literal["uniform", "legacy"] = "uniform"  # legacy: the paper's cut-at-markers boards
    vocab: str | list[str] = "configs/blocks/vocab/items.yaml"  # file (repo-relative) or list
    weird_vocab: str | list[str] = "configs/blocks/vocab/weird.yaml"  # names for renamed items
    views: list[ViewSpec] = field(default_factory=_paper_views)
    trivial: Literal["flag", "drop"] = "flag"  # drop: redraw problems whose goal already holds
    exact_up_to: int = 12  # above this many items store a near-optimal length, not the optimum
    plan_budget: int = 20_000  # search steps per view for an exact length (A* expansions, deadlock search)
    seed: int = 0
    modality: str | list[str] = "text"  # text, image, text+image, or a list: how the prompts show problems


def load_spec(path: str | Path, overrides: dict[str, Any] | None = None) -> SetSpec:
    """Return the SetSpec of a spec file with ``overrides`` (field -> value) applied; raise
    ConfigError naming file:line and field (``<command line>`` for an override) if it is invalid."""
    return config.load_checked(SetSpec, path, overrides, _check, reshape=_problems_only)


def _problems_only(data: Any, source: config.Source) -> Any:
    """Return a spec file's data as a mapping: a bare list is its ``problems`` (their lines in
    ``source`` renamed to match); a mapping as it is."""
    if isinstance(data, list):
        source.lines = {f"problems.{key}": line for key, line in source.lines.items()}
        return {"problems": data}
    return data


def _check(spec: SetSpec, source: config.Source) -> None:
    """Raise ConfigError (file:line: field) for values the types allow but a set does not; set
    ``spec.modality`` to the list of modalities it names (``modality.modalities_of``)."""
    spec.modality = modalities_of(spec.modality, f"{source.where('modality')}: field 'modality'")
    if spec.plan_budget < 1:
        raise ConfigError(f"{source.where('plan_budget')}: plan_budget must be >= 1 (search steps per view)")
    for index, entry in enumerate(spec.problems):
        where = source.where(f"problems.{index}.num_obj")
        if entry.num_obj < 1 or entry.count < 0:
            raise ConfigError(f"{where}: num_obj must be >= 1 and count >= 0")
        for view in spec.views:
            if view.constraints != "all" and not 1 <= view.constraints <= entry.num_obj + 1:
                raise ConfigError(
                    f"{where}: view {view.name!r} wants {view.constraints} constraints but "
                    f"{entry.num_obj} items may give only {entry.num_obj + 1}"
                )
    names = [view.name for view in spec.views]
    if len(set(names)) != len(names) or not names:
        raise ConfigError(f"{source.where('views')}: view names must be distinct and non-empty")
    vocabularies(spec, lambda name: f"{source.where(name)}: field '{name}'")  # fail before any work
    if not any(entry.test and entry.count for entry in spec.problems):
        raise ConfigError(
            f"{source.where('problems')}: no test problems: add an entry with `test: true` "
            "and a count of 1 or more (entries without it are the few-shot examples)"
        )


def vocabularies(spec: SetSpec, where: Callable[[str], str] = str) -> tuple[list[str], list[str]]:
    """Return ``(vocab, weird_vocab)`` of ``spec``; raise ConfigError (prefixed by ``where(field)``)
    if one is unreadable, they share names or one is smaller than the largest problem."""
    vocab = read_vocab(spec.vocab, where("vocab"))
    weird = read_vocab(spec.weird_vocab, where("weird_vocab"))
    overlap = sorted(set(vocab) & set(weird))
    if overlap:
        raise ConfigError(f"{where('weird_vocab')}: shares names with vocab: {', '.join(overlap)}")
    largest = max((entry.num_obj for entry in spec.problems if entry.count), default=0)
    if largest > min(len(vocab), len(weird)):
        raise ConfigError(
            f"{where('vocab')}: {largest} items asked for but the vocabularies have "
            f"{len(vocab)} and {len(weird)} names"
        )
    return vocab, weird


def read_vocab(value: str | list[str], field_name: str) -> list[str]:
    """Return a vocabulary: ``value`` itself if a list, else the JSON or YAML list in that file."""
    if isinstance(value, list):
        words = value
    else:
        file = paths.ROOT / value
        if not file.is_file():
            raise ConfigError(
                f"{field_name}: no such file {value} (paths are relative to the repository; "
                f"the paper's vocabularies need `make data`)"
            )
        text = file.read_text(encoding="utf-8")
        try:
            words = json.loads(text) if file.suffix == ".json" else yaml.safe_load(text)
        except (json.JSONDecodeError, yaml.YAMLError) as exc:
            raise ConfigError(f"{field_name}: {value} is not a readable list: {exc}") from None
    if not isinstance(words, list) or not all(isinstance(w, str) and w.strip() for w in words):
        raise ConfigError(f"{field_name}: expected a list of item names ({value})")
    if len(set(words)) != len(words):
        raise ConfigError(f"{field_name}: duplicate item names in {value}")
    return list(words)


def generate(
    ref: SetRef, seed: int | None = None, overrides: dict[str, Any] | None = None
) -> dict[str, dict[Any, str]]:
    """Write the set ``ref`` from its config (``ref.config``; ``seed`` and ``overrides`` replacing
    the spec's): its problems (``write_problems``: ``problems/``, manifest.json last) and the
    paper's planning and translation prompts of every view in every modality of the spec
    (``write_prompts``), and in a picture modality each problem view's picture, drawn once into
    ``images/`` (``draw_pictures``). Return each
    results subdirectory's items (``<nl|pddl>___<view>``: {Key: fingerprint}). Raises ConfigError
    naming the config, before anything is written, for a spec that is invalid or cannot be
    generated (a problem over its budget, no training problems for the few-shot examples)."""
    spec = load_spec(ref.config, overrides)
    seed = spec.seed if seed is None else seed
    views = [view.name for view in spec.views]
    try:
        problems = make_problems(spec, seed)
        prompts = prompt_files(problems, views, modalities=spec.modality)
    except (ConfigError, DataError) as exc:
        raise ConfigError(f"{paths.shown(ref.config)}: {exc}") from None
    about = {"spec_file": paths.shown(ref.config), "seed": seed, "generator": spec.generator, "views": views}
    if spec.modality != [TEXT]:
        about["modalities"] = spec.modality
    write_problems(ref.data / "problems", problems, about)
    if any(shows_pictures(m) for m in spec.modality):
        for view in views:
            draw_pictures(problems, view, ref.data / "images")
    return write_prompts(ref.data, prompts)


def draw_pictures(problems: list[Problem], view: str, directory: Path) -> int:
    """Draw the picture of every problem's ``view`` (``prompts.pictured_views``: the test problems
    and the few-shot examples) into ``directory`` unless it is there (``store.save_picture``:
    content addressed, so each is drawn once); return how many the prompts show."""
    views = pictured_views(problems, view)
    for shown in views:
        save_picture(directory, name_of(shown), lambda shown=shown: draw_picture(shown))
    return len(views)


def prompt_files(
    problems: list[Problem],
    views: list[str],
    example_plan: Callable[[Problem, View], list[Move]] | None = None,
    modalities: list[str] | None = None,
) -> dict[str, list[dict[str, Any]]]:
    """Return the paper's prompts of every view of ``problems`` by file name
    (``paper___<nl|pddl>___<view>.jsonl``: ``prompts.prompt_records``, each record with its
    prompt in every picture modality of ``modalities``), the few-shot examples solved by
    ``example_plan`` (default: the optimal planner). Raises DataError for a set without
    training or test problems."""
    solve = example_plan or (lambda problem, view: optimal_plan(view.init_board, view.goal))
    files = {}
    for view in views:
        for prompt_type in PROMPT_TYPES:
            records = prompt_records(problems, view, prompt_type, PROMPTING, solve, modalities or [TEXT])
            if not records:
                raise DataError(
                    "no test problems (`test: true`), so no prompts: add test entries to the spec"
                )
            files[f"{PROMPTING}___{prompt_type}___{view}.jsonl"] = records
    return files


def write_prompts(data_dir: Path, files: dict[str, list[dict[str, Any]]]) -> dict[str, dict[Any, str]]:
    """Write the prompts ``files`` (``prompt_files``) to ``data_dir/prompts/`` (the paper's
    prompts of views no longer asked are removed) and return each results subdirectory's items,
    {Key: fingerprint}: a Key (``items.prompt_key``) is already a hash of what is asked, so it is
    its own fingerprint."""
    directory = Path(data_dir) / "prompts"
    for old in sorted(directory.glob(f"{PROMPTING}___*___*.jsonl")):
        if old.name not in files:
            old.unlink()
    fingerprints: dict[str, dict[Any, str]] = {}
    for name, records in files.items():
        write_jsonl(directory / name, records)
        _, prompt_type, view = name.removesuffix(".jsonl").split("___")
        keys = [prompt_key(pid, view, texts) for pid, texts in _texts_by_problem(records, prompt_type)]
        fingerprints[f"{prompt_type}___{view}"] = {key: str(key) for key in keys}
    return fingerprints


def _texts_by_problem(records: list[dict[str, Any]], prompt_type: str) -> list[tuple[str, list[str]]]:
    """Return each problem's id and its prompt texts in ``PARTS`` order, in the records' order."""
    texts: dict[str, dict[str, str]] = {}
    for record in records:
        texts.setdefault(record["id"], {})[record["part"]] = record["text"]
    return [(pid, [parts[part] for part in PARTS[prompt_type]]) for pid, parts in texts.items()]


def make_problems(spec: SetSpec, seed: int | None = None) -> list[Problem]:
    """Return the problems of ``spec`` (with ``seed`` replacing the spec's seed when given)."""
    seed = spec.seed if seed is None else seed
    vocab, weird = vocabularies(spec)
    entries = [entry for entry in spec.problems for _ in range(entry.count)]
    width = max(3, len(str(len(entries) - 1)))
    return [
        make_problem(entry, spec, vocab, weird, random.Random(f"blocks:{seed}:{index}"), f"{index:0{width}d}")
        for index, entry in enumerate(entries)
    ]


def make_problem(
    entry: ProblemSpec, spec: SetSpec, vocab: list[str], weird: list[str], rng: random.Random, pid: str
) -> Problem:
    """Return one problem drawn with ``rng`` (redrawn while trivial if ``spec.trivial`` is drop)."""
    board = GENERATORS[entry.generator or spec.generator]
    for _attempt in range(10_000):
        items = rng.sample(vocab, entry.num_obj)
        init, goal = board(items, rng), board(items, rng)
        relations = board_relations(goal)
        rng.shuffle(relations)
        names = sorted(items)
        vocab_map = dict(zip(names, rng.sample(weird, len(names)), strict=True))
        views = {
            v.name: relations if v.constraints == "all" else relations[: v.constraints] for v in spec.views
        }
        smallest = min(views.values(), key=len)
        if spec.trivial == "flag" or not goal_holds(init, smallest):
            break
    else:
        raise ConfigError(f"problem {pid}: every draw had a goal that already holds; use trivial: flag")
    view_specs = {v.name: {"constraints": v.constraints, "rename": v.rename} for v in spec.views}
    problem = Problem(pid, init, goal, views, vocab_map, view_specs=view_specs, test=entry.test)
    problem.extra = {
        "num_obj": entry.num_obj,
        "generator": entry.generator or spec.generator,
        **plan_lengths(problem, spec.exact_up_to, spec.plan_budget),
    }
    return problem


def plan_lengths(problem: Problem, exact_up_to: int, plan_budget: int | None = None) -> dict[str, Any]:
    """Return ``{"trivial_goal": {view: bool}, "optimal_plan_length": {view: n or None}}`` and, for
    problems above ``exact_up_to`` items, ``"near_optimal_plan_length"`` (at most twice the optimum).

    A partial goal's A* may expand at most ``plan_budget`` states and a full goal's deadlock
    search take at most that many steps (None: no limit; full goals of 24 items need a few
    hundred). Past that it raises ConfigError naming the problem, its size and view and the two
    ways out, rather than running for hours: a deterministic count, not a time limit, so a set
    generates the same on any machine or fails on all.
    """
    exact = len(problem.items) <= exact_up_to
    trivial, optimal, upper = {}, {}, {}
    for name, relations in problem.views.items():
        trivial[name] = goal_holds(problem.init_board, relations)
        if exact:
            try:
                optimal[name] = optimal_length(problem.init_board, relations, plan_budget)
            except SearchBudgetExceeded:
                n = len(problem.items)
                raise ConfigError(
                    f"problem {problem.id} ({n} items), view {name!r}: no optimal plan within plan_budget = "
                    f"{plan_budget:,} search steps (A* expansions for a partial goal, which can need far "
                    f"more at this size); raise plan_budget in the spec file, or set exact_up_to below {n} "
                    f"to store a near-optimal length for problems of this size"
                ) from None
        else:
            optimal[name] = None
            upper[name] = len(near_optimal_plan(problem.init_board, relations))
    lengths: dict[str, Any] = {"trivial_goal": trivial, "optimal_plan_length": optimal}
    if upper:
        lengths["near_optimal_plan_length"] = upper
    return lengths

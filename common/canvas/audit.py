"""The audit, the canvas sets' gate: with one input the skill needs blinded, can a strong learner
still tell the answer? It audits the generator (a set's config), not the set's sample.

For each task of a set's config and each of its views (``views.VIEWS``: one per input the items'
twins vary, such as the transitivity reference or the asked shape's own events, and a few more),
two learners (``learners``: a logit and boosted trees on the generic features of ``features``)
are fitted on ``FIT`` fresh trials and the better one is tested once on ``TEST`` others: fresh
items drawn as the set draws them, one random member of each item's tuple in one random variant
(``build.fresh_trials``), so the test trials are independent and the interval is a plain
Wilson interval a few points wide. Its accuracy is compared with the view's chance rate. The gate
holds the views of all the config's tasks together: no interval at 1 - 0.05 / k may lie above
chance (Bonferroni), so a generator whose every view is at chance passes 95% of the time. A view
above it fails the gate (below chance is no leak: a learner worse than a guess offers no rule). A
view a twin cannot close (``View.gated`` False, with the reason) is reported beside the gate,
fitted with the trees alone; the learners' reach is shown by the planted leaks they catch
(``power``), not by a control.

The answer a learner predicts is the gold answer, or for a shape (shuffle tracking) the order in
which the prompt first names it (``features.gold_class``): an identity means nothing.

``write_audit`` (the set's audit stage, ``scripts/audit_canvas.py``) caches the audit keyed by
the generator's settings (``audited``: the config less its seed, its number of items, its
modalities, description types and few-shot styles: the audit draws its own items in every
variant) and the code it imports (``common.codedeps``): a set that only changes those shares the
audit of the one it copied, and a change to the generator audits it again. ``power.write_power``
does the same for the planted leaks. The audits of the default sets and the power table are
recorded with the code in ``common/canvas/audited/`` (``make canvas-audits``; a test checks that
the record matches the code), so a fresh clone reads them instead of spending minutes; any
other set's audit is computed once and cached under ``.cache/canvas/``.
"""

import dataclasses
import hashlib
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from common import codedeps, paths
from common.canvas import features, learners, rules, views
from common.canvas.build import fresh_trials
from common.canvas.setconfig import SetConfig, load_config
from common.canvas.shortcuts import chance
from common.canvas.tasks import Task
from common.errors import DataError
from common.jsonl import write_json
from common.stats import clustered_wilson_interval

SHIPPED = paths.ROOT / "common" / "canvas" / "audited"  # recorded with the code: make canvas-audits
POWER_COLUMNS = [  # the power table's columns (``power.power_table``)
    "leak",
    "task",
    "strength",
    "rule",
    "view",
    "accuracy",
    "gate_lo",
    "gate_hi",
    "chance",
    "caught",
]

FIT = 3000  # fresh trials per task the learners are fitted on (a sixth of them choose the learner)
TEST = 2000  # fresh trials per task the chosen learner is tested on, once
FAMILY = 0.95  # the chance that a generator whose every view is at chance passes the gate
COLUMNS = [
    "task",
    "view",
    "blinds",
    "learner",
    "trials",
    "train_trials",
    "accuracy",
    "lo",
    "hi",
    "gate_lo",
    "gate_hi",
    "chance",
    "gated",
    "at_chance",
]
FLOATS = ("accuracy", "lo", "hi", "gate_lo", "gate_hi", "chance")


def audited(cfg: SetConfig) -> SetConfig:
    """Return the generator the audit of a set's config draws from: the config with every
    description type and few-shot style (each fresh trial in one of them at random, the learners
    told which), text prompts, and seed and size set aside (the audit draws its own items). Sets
    that differ only in those share one audit: the pictures set shares the standard set's."""
    default = SetConfig()
    return dataclasses.replace(
        cfg, seed=0, items=0, modality="text", descriptions=default.descriptions, fewshot=default.fewshot
    )


def generator_settings(cfg: SetConfig) -> dict[str, Any]:
    """Return what of a set's config its audit depends on (``audited``): everything but its seed,
    its number of items, its modalities, its description types and its few-shot styles."""
    record = dataclasses.asdict(audited(cfg))
    for name in ("seed", "items", "modality", "descriptions", "fewshot"):
        record.pop(name)
    return record


def fresh(cfg: SetConfig, task: str | Task, count: int, role: str) -> pd.DataFrame:
    """Return ``count`` fresh trials of ``task`` (a name, or a task: a planted leak) by
    ``build.fresh_trials``, seeded by ``role`` ("fit", "test"), never by the set's seed."""
    trials = pd.DataFrame(fresh_trials(cfg, task, count, f"audit:{role}"))
    return trials.assign(item=trials["tuple_ID"]) if not trials.empty else trials


def audit_view(
    train: pd.DataFrame, test: pd.DataFrame, view: views.View, gate: float = 0.95
) -> dict[str, Any]:
    """Return one task's row for ``view``: the learner chosen on ``train``, its accuracy on
    ``test`` with a 95% Wilson interval (``lo``, ``hi``) and the interval at the ``gate`` level
    (``gate_lo``, ``gate_hi``: the config's views together, see ``audit``), the chance rate, and
    whether the gate's interval holds it. A view that ``applies`` to some questions only is fitted
    and tested on those."""
    if view.applies is not None:
        train = train[[view.applies(q) for q in train["question"]]]
        test = test[[view.applies(q) for q in test["question"]]]
    row: dict[str, Any] = {
        "view": view.name,
        "blinds": view.blinds,
        "trials": len(test),
        "train_trials": len(train),
    }
    if train.empty or test.empty or train["goldresp"].nunique() < 2:
        nothing = dict.fromkeys(FLOATS, math.nan)
        return row | nothing | {"learner": "no fresh trials: not audited", "gated": False, "at_chance": True}
    from threadpoolctl import threadpool_limits

    fitted = learners.fit_best(
        features.frame(train, view),
        np.array([features.gold_class(t) for t in train.to_dict("records")]),
        train["item"].to_numpy(),
        learners.LEARNERS if view.gated else (learners.Trees,),  # the control and diagnostics: trees
    )
    with threadpool_limits(1):
        predicted = fitted.predict(*features.frame(test, view))
    right = (predicted == np.array([features.gold_class(t) for t in test.to_dict("records")])).astype(int)
    ones = [1] * len(right)
    p, lo, hi = clustered_wilson_interval(right.tolist(), ones)
    _, gate_lo, gate_hi = clustered_wilson_interval(right.tolist(), ones, gate)
    rates = [
        view.chance or chance(task, len(options), text)
        for task, options, text in zip(test["task"], test["expectedresp"], test["text"], strict=True)
    ]
    rate = float(np.mean(rates))
    return row | {
        "learner": repr(fitted),
        "accuracy": p,
        "lo": lo,
        "hi": hi,
        "gate_lo": gate_lo,
        "gate_hi": gate_hi,
        "chance": rate,
        "gated": view.gated,
        "at_chance": bool(gate_lo <= rate),  # one-sided: below chance is no leak (no rule gains by it)
    }


def audit(
    cfg: SetConfig, tasks: list[str] | None = None, fit: int = FIT, test: int = TEST
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Return the audit of the generator ``cfg``: its views (one row per task and view: learners
    fitted on ``fit`` fresh trials of each of ``tasks``, default the config's, tested on ``test``
    others; the gate holds the gated views to intervals at ``gate_level``) and its rules (the
    shortcuts and partial skills of ``rules.rule_table`` scored on the same test trials)."""
    cfg = audited(cfg)
    tasks = [t for t in (tasks or cfg.tasks) if t in views.VIEWS]
    level = gate_level(cfg)
    rows, scored = [], []
    for task in tasks:
        train, held = fresh(cfg, task, fit, "fit"), fresh(cfg, task, test, "test")
        for view in views.VIEWS[task]:
            rows.append({"task": task} | audit_view(train, held, view, level))
        scored.append(rules.rule_table(held))
    table = pd.DataFrame(rows, columns=COLUMNS)
    return table, pd.concat(scored, ignore_index=True) if scored else pd.DataFrame()


def gate_level(cfg: SetConfig) -> float:
    """Return the confidence of each gated view's interval for the config's tasks: 1 - 0.05 / k
    for k gated views (Bonferroni), so that a generator whose every view is at chance passes with
    probability ``FAMILY`` at least."""
    gated = sum(view.gated for task in cfg.tasks for view in views.VIEWS.get(task, []))
    return 1 - (1 - FAMILY) / max(gated, 1)


def cache_key(cfg: SetConfig, module: str = "common.canvas.audit") -> str:
    """Return the key of a config's audit (or, with ``module`` ``common.canvas.power``, of its power
    table): its generator settings, the audit's sizes, the code ``module`` imports and the
    learners' library version."""
    import sklearn

    code = codedeps.behaviour_fingerprint(codedeps.closure([module]))
    text = json.dumps([generator_settings(cfg), FIT, TEST, code, sklearn.__version__], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def power_name() -> str:
    """Return the file name of the power table's record for the current code (``power.write_power``)."""
    return f"power-{cache_key(SetConfig(), 'common.canvas.power')}.json"


def stored_at(name: str, cache: Path | None) -> Path | None:
    """Return where a cached audit or power table ``name`` is: in the record shipped with the code
    (``SHIPPED``) when it is there, else under ``cache`` (None without a cache)."""
    shipped = SHIPPED / name
    if shipped.is_file():
        return shipped
    return cache / name if cache else None


def write_audit(config: Path, out: Path, cache: Path | None = None, ship: bool = False) -> pd.DataFrame:
    """Write the audit of the set config ``config`` to ``out`` (JSON: the generator's settings,
    the fresh trials' sizes, the gate's level, the views and the rules), computed unless the
    shipped record or ``cache`` holds it for this code (``cache_key``); with ``ship`` it is also
    recorded in ``SHIPPED`` (``make canvas-audits``). Return the views."""
    cfg = load_config(config)
    name = f"audit-{cache_key(cfg)}.json"
    record = stored_at(name, cache)
    if record and record.is_file():
        document = json.loads(record.read_text())
    else:
        table, scored = audit(cfg)
        document = {
            "settings": generator_settings(cfg),
            "fit": FIT,
            "test": TEST,
            "level": gate_level(cfg),
            "views": json.loads(table.to_json(orient="records")),
            "rules": json.loads(scored.to_json(orient="records")),
        }
        if record:
            write_json(record, document)
    if ship:
        write_json(SHIPPED / name, document)
    write_json(out, document)
    return read_audit(out)[0]


def read_audit(path: Path) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, Any]]:
    """Return an audit ``write_audit`` wrote: its views, its rules, and the rest (sizes, level)."""
    if not path.is_file():
        raise DataError(
            f"{paths.shown(path)} is missing: audit the set's generator first (make, or "
            "scripts/audit_canvas.py -t canvas/<set>)"
        )
    document = json.loads(path.read_text())
    table = pd.DataFrame(document.pop("views"), columns=COLUMNS).astype({name: float for name in FLOATS})
    return table, pd.DataFrame(document.pop("rules")), document


def shipped_names(configs: list[Path]) -> list[str]:
    """Return the names of the records ``SHIPPED`` must hold for the current code: the audit of
    each set config of ``configs`` and the power table (a test checks they are there, so a change
    to the generator or the audit lands with its audit run again)."""
    names = {f"audit-{cache_key(load_config(path))}.json" for path in configs}
    return sorted(names | {power_name()})


def read_power(path: Path) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Return the power table ``write_power`` wrote, and its sizes and level."""
    if not path.is_file():
        raise DataError(
            f"{paths.shown(path)} is missing: measure the gate's power first (make, or "
            "scripts/audit_canvas.py --power)"
        )
    document = json.loads(path.read_text())
    return pd.DataFrame(document.pop("leaks"), columns=POWER_COLUMNS), document


def failures(table: pd.DataFrame, set_name: str) -> list[str]:
    """Return one message per gated view whose learner beats chance: which check, which task, the
    figures and what to do."""
    out = []
    for row in table[table["gated"].astype(bool) & ~table["at_chance"].astype(bool)].itertuples():
        out.append(
            f"canvas audit failed on {set_name}: {row.task}, view '{row.view}' (blinds {row.blinds}): "
            f"{row.learner} scores {100 * row.accuracy:.1f}% on {row.trials:,} fresh trials (95% interval "
            f"[{100 * row.lo:.1f}, {100 * row.hi:.1f}]; the gate's, over the config's views, "
            f"[{100 * row.gate_lo:.1f}, {100 * row.gate_hi:.1f}]) against chance {100 * row.chance:.1f}%: "
            f"something other than what the view blinds tells the answer. Fix the generator of {row.task} "
            "(common/canvas/tasks/) so that each item's twin differs in what the view blinds alone and "
            "every other choice is drawn apart from the answer, and run make again; do not report this "
            "set's results for that task until then"
        )
    return out

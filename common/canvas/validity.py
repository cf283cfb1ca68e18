"""The canvas suite's validity in the report: the audit (the gate), the named rules on fresh
trials, the gate's power on planted leaks, the shortcut baselines, and the lines that say what the
checks ran on and which of them failed.

Display functions take the tables of ``common.canvas.analysis`` (the audit stage's output and the
set's scored rows) and return display tables; ``check_lines`` and ``validity_lines`` are the
report's summary and the suite's top.
"""

import math

import pandas as pd

from common.report import interval_text

AUDIT_TITLE = (
    "Audit (the gate): with one input the skill needs blinded at a time, the better of a logit and "
    "boosted trees fitted on fresh trials of the set's generator, tested once on other fresh trials; "
    "each gated view's interval (Bonferroni over the generator's views) must hold chance"
)
RULES_TITLE = (
    "Named rules on fresh trials: shortcuts (read nothing the skill needs) and partial skills (read "
    "part of it), with the share of this set's contrast tuples each answers right whole"
)
POWER_TITLE = (
    "The gate's power: leaks planted in the default generator at a share of its items, the rule that "
    "reads each, and whether the view that should see it left chance"
)


def _cell(p: float, lo: float, hi: float) -> str:
    """Return ``"57.1 [45.0, 68.4]"`` (percent), or ``"-"`` without a value."""
    return interval_text(p, lo, hi, scale=100)


def _pct(value: float, digits: int = 1) -> str:
    """Return a share as a percent, or ``"-"`` when missing."""
    return "-" if value is None or value != value else f"{100 * value:.{digits}f}"


def shortcut_display(table: pd.DataFrame) -> pd.DataFrame:
    """Return the shortcut baselines' table (their runs on the set) for display (percent)."""
    shown = table[["shortcut", "task", "rule", "items"]].copy()
    shown["reads %"] = [f"{100 * r:.0f}" for r in table["reads"]]
    shown["score % [CI, family-wise 95%]"] = [_cell(r.score, r.lo, r.hi) for r in table.itertuples()]
    shown["chance %"] = [f"{100 * c:.1f}" for c in table["chance"]]
    shown["at chance"] = [
        "-" if ok is None or ok != ok else "yes" if ok else "NO" for ok in table["at_chance"]
    ]
    return shown.set_index("shortcut")


def audit_display(table: pd.DataFrame) -> pd.DataFrame:
    """Return the audit for display (percent), one row per task and view."""
    shown = table[["task", "view", "learner", "trials"]].copy()
    shown["accuracy % [95% CI]"] = [_cell(r.accuracy, r.lo, r.hi) for r in table.itertuples()]
    shown["gate's interval %"] = [
        "-" if r.gate_lo != r.gate_lo else f"[{100 * r.gate_lo:.1f}, {100 * r.gate_hi:.1f}]"
        for r in table.itertuples()
    ]
    shown["chance %"] = [_pct(c) for c in table["chance"]]
    shown["gate"] = [
        ("pass" if ok else "FAIL") if gated else "not gated"
        for gated, ok in zip(table["gated"], table["at_chance"], strict=True)
    ]
    return shown.set_index(["task", "view"])


def rules_display(table: pd.DataFrame, tuples: pd.DataFrame) -> pd.DataFrame:
    """Return the named rules on fresh trials for display (percent): each one's score with its
    interval, chance, the share it reads and differs from the skill on, and the share of the set's
    tuples it answers right whole (``tuples``: ``analysis.rules_on_tuples``)."""
    whole = dict(zip(tuples["rule"], tuples["tuples_right"], strict=True)) if not tuples.empty else {}
    shown = table[["rule", "kind", "task", "about"]].copy()
    shown["reads %"] = [f"{100 * r:.0f}" for r in table["reads"]]
    shown["score % [95% CI]"] = [_cell(r.score, r.lo, r.hi) for r in table.itertuples()]
    shown["chance %"] = [_pct(c) for c in table["chance"]]
    shown["differs from the skill %"] = [_pct(d) for d in table["differs"]]
    shown["whole tuples right on this set %"] = [_pct(whole.get(name, math.nan)) for name in table["rule"]]
    return shown.set_index("rule")


def power_display(table: pd.DataFrame) -> pd.DataFrame:
    """Return the power table for display (percent), one row per leak and strength."""
    shown = table[["leak", "task"]].copy()
    shown["items leaking %"] = [f"{100 * s:.1f}" for s in table["strength"]]
    shown["its rule %"] = [_pct(r) for r in table["rule"]]
    shown["chance %"] = [_pct(c) for c in table["chance"]]
    shown["view"] = table["view"]
    shown["view's accuracy %"] = [_pct(a) for a in table["accuracy"]]
    shown["gate's interval %"] = [
        f"[{100 * r.gate_lo:.1f}, {100 * r.gate_hi:.1f}]" for r in table.itertuples()
    ]
    shown["caught"] = ["yes" if c else "no" for c in table["caught"]]
    return shown.set_index(["leak", "items leaking %"])


def smallest_caught(power: pd.DataFrame) -> str:
    """Return the smallest planted leak the gate caught, as a phrase: the leak, the share of items
    carrying it, and its rule's score against chance (the smallest edge over chance caught)."""
    caught = power[power["caught"].astype(bool)]
    if caught.empty:
        return "no planted leak was caught"
    row = caught.loc[(caught["rule"] - caught["chance"]).idxmin()]
    return (
        f"{row['leak']} in {100 * row['strength']:.1f}% of the items, which its rule turns into "
        f"{100 * row['rule']:.1f}% against chance {100 * row['chance']:.1f}%"
    )


def validity_lines(
    audited: pd.DataFrame, meta: dict, power: pd.DataFrame, tuples: int, trials: int
) -> list[str]:
    """Return what the suite's top says of its validity: the set's tuples, what the audit ran on and
    how many of its gated views hold chance, and the smallest planted leak the gate caught."""
    gated = audited[audited["gated"].astype(bool)]
    held = int(gated["at_chance"].astype(bool).sum())
    leaks = int(power["caught"].astype(bool).sum()) if not power.empty else 0
    line = (
        f"Every item is asked with its contrast twins ({tuples:,} tuples, {trials:,} trials). The gate "
        f"audited the generator on {meta['fit'] + meta['test']:,} fresh trials per task ({meta['fit']:,} "
        f"to fit, {meta['test']:,} to test): {held} of {len(gated)} views at chance. Planted leaks caught: "
        f"{leaks} of {len(power)}, the smallest {smallest_caught(power)}."
    )
    return [line]


def check_lines(shortcuts: pd.DataFrame, audited: pd.DataFrame) -> list[str]:
    """Return one line counting the validity checks at chance (shortcut baselines; the audit's
    gated views), then one line per check that is not: the check, its task, its score against
    chance, and what a user should do. A shortcut above its interval (held with the others at a
    family-wise 95%) asks for another seed first; an audit view out is the gate failing
    (``common.canvas.audit.failures``: the analysis exits 1)."""
    counts, lines = [], []
    if not shortcuts.empty:
        tested, missed = _tested_and_missed(shortcuts)
        counts.append(f"shortcut baselines at chance: {len(tested) - len(missed)} of {len(tested)}")
        lines += shortcut_misses(shortcuts)
    gated, out = _tested_and_missed(audited[audited["gated"].astype(bool)])
    if not gated.empty:
        counts.append(f"audit views at chance (the gate): {len(gated) - len(out)} of {len(gated)}")
        for r in out.itertuples():
            lines.append(
                f"canvas audit FAILED on task {r.task}, view '{r.view}': {r.learner} scores "
                f"{100 * r.accuracy:.1f}% against chance {100 * r.chance:.1f}%; fix the task's generator "
                "(common/canvas/tasks/), regenerate the set and rerun; do not report this task until then"
            )
    return (["canvas " + "; ".join(counts)] if counts else []) + lines


def shortcut_misses(shortcuts: pd.DataFrame) -> list[str]:
    """Return one line per shortcut baseline above chance on its task (the section's ``missed``:
    the report opens the suite with them): the check, the task, the score against chance, and
    what to do. The intervals are held together (``analysis.shortcut_table``: Bonferroni over the
    shortcuts that read the set), so a set whose every shortcut is at chance passes 95% of the
    time, and a miss asks for another seed first."""
    tested, missed = _tested_and_missed(shortcuts) if not shortcuts.empty else (shortcuts, shortcuts)
    return [
        f"canvas check 'shortcut at chance' not met on task {r.task}: {r.shortcut} scores "
        f"{100 * r.score:.1f}% [{100 * r.lo:.1f}, {100 * r.hi:.1f}] against chance "
        f"{100 * r.chance:.1f}% (the {len(tested)} shortcuts' intervals held together at 95%): "
        "regenerate the set with another seed (its config's seed:); if the same shortcut misses "
        f"again, the {r.task} generator leaks the answer (see the audit table and "
        "common/canvas/tasks/)"
        for r in missed.itertuples()
    ]


def _tested_and_missed(checks: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Return the checks with a verdict (``at_chance`` not missing) and, of them, those not at chance."""
    tested = checks[checks["at_chance"].notna()]
    return tested, tested[~tested["at_chance"].astype(bool)]

"""Where the report comes from: commit, date, configs, pinned external data, inputs and models.

``provenance`` gathers it from the saved sections (``common.report``) and the tree;
``provenance_line`` and ``provenance_tables`` give it as a sentence and flat tables, which the
report renders as Markdown and HTML; ``token_budget_lines`` (at the top of the report),
``token_budget_by_suite`` (a row per model, a column per suite) and ``token_budget_table`` (a row
per results file, folded) show how the models' replies used their token budget. A run's model
settings, its number of runs, their tokens and cost, and its replies' token use come from the
results database (``common.run_records``: the score stage recorded them from the results file's run
records, ``common.run_identity``), so no results file or run metadata is read again. Settings never
hold a key (a run records only the variable's name).
"""

import datetime
import sqlite3
import subprocess
from collections.abc import Sequence
from typing import Any

from common import paths, run_records
from common.jsonl import sha256_file

MAX_CHANGED = 20  # changed files named in the provenance line; the rest counted
# the token budget's part of the report: its heading, what it says, the title of its folded table
BUDGET_TITLE = "Token budget of the model runs"
BUDGET_FILES = "Each results file: max_tokens, replies, the share cut, tokens per reply"
BUDGET_ABOUT = (
    "How each model run's replies used `max_tokens`: a reply cut at the limit (finish_reason "
    "`length`) while the model was still thinking has no answer and is scored wrong. A share above "
    "a few percent means the budget was too small: raise it and rerun with `--retry-truncated`. "
    "Reasoning tokens are the server's count, or the reasoning's share of the characters when it "
    "reports none; answer tokens are the rest of the completion tokens."
)


def provenance(sections: Sequence[dict[str, Any]], conn: sqlite3.Connection | None = None) -> dict[str, Any]:
    """Return where the report comes from: date, commit (and whether the tree had changes), the
    configs in configs/ and the pinned external data (with their SHA-256), the inputs of every
    section, and the models that wrote its results files (settings, runs, tokens, cost and token
    use as the results database ``conn`` recorded them; ``no_metadata`` for a file it does not
    hold)."""
    files = [e["path"] for s in sections for e in s["inputs"] if e["path"].endswith("___results.jsonl")]
    recorded = run_records.recorded_runs(conn, files) if conn is not None else {}
    commit, changed = git_state()
    configs = sorted(p for p in paths.CONFIGS.rglob("*.yaml") if p.is_file())
    pinned = sorted(paths.CONFIGS.glob("data/*.sha256"))
    return {
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": commit,
        "uncommitted_changes": bool(changed) if changed is not None else None,
        "changed_files": changed or [],
        "configs": [{"path": paths.shown(p), "sha256": sha256_file(p)} for p in configs],
        "pinned_data": [
            {
                "list": paths.shown(p),
                "files": sum(
                    1 for line in p.read_text().splitlines() if line.strip() and not line.startswith("#")
                ),
            }
            for p in pinned
        ],
        "inputs": [
            {**entry, "suite": section["suite"]} for section in sections for entry in section["inputs"]
        ],
        "models": [model for section in sections for model in _models(section, recorded)],
    }


def git_commit() -> str:
    """Return the commit the checkout is at, "unknown" outside git (what a run's metadata records;
    cheaper than ``git_state``, which also lists the changed files)."""
    try:
        return _git("rev-parse", "HEAD").strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def _git(*args: str) -> str:
    """Return the output of ``git <args>`` in the project root (raises when git fails)."""
    run = {"cwd": paths.ROOT, "capture_output": True, "text": True, "check": True, "timeout": 30}
    return subprocess.run(["git", *args], **run).stdout


def git_state() -> tuple[str, list[str] | None]:
    """Return (commit hash, the files that differ from it: modified tracked files and untracked
    ones that are not ignored, e.g. a new model script or config, as ``git status`` names them);
    ("unknown", None) outside git."""
    commit = git_commit()
    try:
        status = _git("status", "--porcelain", "--untracked-files=all")
    except (OSError, subprocess.SubprocessError):
        return "unknown", None
    return commit, [line[3:] for line in status.splitlines() if line.strip()]


def _models(section: dict[str, Any], recorded: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Return one entry per results file among the section's inputs: the file, the model's
    settings of its last run (never a key), the runs that wrote it, their tokens and cost, and its
    replies' token use, all as the results database recorded them (``recorded``); ``no_metadata``
    settings and zeros for a file whose runs recorded nothing (released results, a template
    script) or that the database does not hold."""
    models = []
    for entry in section["inputs"]:
        if not entry["path"].endswith("___results.jsonl"):
            continue
        found = {"suite": section["suite"], "results": entry["path"]}
        known = recorded.get(entry["path"])
        if not known or known["settings"] is None:  # released with a paper, or a template script
            models.append(
                {**found, "runs": 0, "settings": {"no_metadata": True}, "tokens": 0, "cost_usd": 0.0}
            )
            continue
        settings = {k: v for k, v in known["settings"].items() if v is not None}  # never a key: see models
        models.append(
            {
                **found,
                "runs": known["runs"],
                "settings": settings,
                "tokens": known["tokens"],
                "cost_usd": known["cost_usd"],
                **({} if settings.get("builtin") else {"use": known["use"]}),
            }
        )
    return models


def token_budget_table(prov: dict[str, Any]) -> dict[str, Any] | None:
    """Return the report's table of how the models' replies used their token budget, one row per
    results file of a model whose replies report tokens or were cut (built-ins spend none; a model
    file or a server that counts no tokens has nothing to show: ``no_token_runs`` names them):
    replies, the share cut at the token limit (a reasoning model cut while thinking gave no answer,
    and scored it wrong), and the mean reasoning and answer tokens per reply; None when no run has
    a row."""
    rows = []
    for m in prov["models"]:
        use = m.get("use")
        if not _reports_tokens(use):
            continue
        replies = use["replies"]
        limit = m["settings"].get("max_tokens", "none")
        rows.append(
            [
                m["suite"],
                m["settings"].get("name", "?"),
                m["results"],
                str(limit),
                f"{replies:,}",
                f"{use['cut'] / replies:.1%} ({use['cut']:,})",
                f"{use['reasoning_tokens'] / replies:.1f}",
                f"{use['answer_tokens'] / replies:.1f}",
            ]
        )
    columns = ["suite", "model", "results file", "max_tokens", "replies", "cut at the limit"]
    columns += ["reasoning tokens per reply", "answer tokens per reply"]
    return {"columns": columns, "rows": rows} if rows else None


def token_budget_by_suite(prov: dict[str, Any]) -> dict[str, Any] | None:
    """Return the token budget as the suites' headline tables are laid out: a row per model whose
    replies report tokens or were cut, a column per suite, each cell the share of its replies cut
    at the token limit (of how many, at which ``max_tokens``) and the mean reasoning + answer
    tokens per reply over the model's results files in that suite; "-" where it has none. The
    report shows it open, its files (``token_budget_table``) folded; None when no run has a row."""
    cells: dict[str, dict[str, list[Any]]] = {}
    for m in prov["models"]:
        use = m.get("use")
        if not _reports_tokens(use):
            continue
        cell = cells.setdefault(m["settings"].get("name", "?"), {}).setdefault(m["suite"], [0, 0, 0, 0, {}])
        for i, key in enumerate(("replies", "cut", "reasoning_tokens", "answer_tokens")):
            cell[i] += use[key]
        cell[4][str(m["settings"].get("max_tokens", "none"))] = None
    if not cells:
        return None
    suites = list(dict.fromkeys(m["suite"] for m in prov["models"] if _reports_tokens(m.get("use"))))

    def text(replies: int, cut: int, reasoning: int, answer: int, limits: dict[str, None]) -> str:
        tokens = (
            f"{reasoning / replies:.0f} + {answer / replies:.1f}" if reasoning else f"{answer / replies:.1f}"
        )
        return f"{cut / replies:.1%} of {replies:,} at {'/'.join(limits)}; {tokens}"

    rows = [[name, *(text(*by[s]) if s in by else "-" for s in suites)] for name, by in cells.items()]
    title = (
        "Replies cut at max_tokens (the share, of how many, at which limit); tokens per reply (reasoning "
        "+ answer): a row per model, a column per suite"
    )
    return {"title": title, "columns": ["model", *suites], "rows": rows, "untrusted": True}


def no_token_runs(prov: dict[str, Any]) -> str | None:
    """Return one line naming the models whose replies report no tokens and were never cut (and
    how many results files each), which the token-budget table leaves out; None when there are
    none."""
    files: dict[str, int] = {}
    for m in prov["models"]:
        use = m.get("use")
        if use and use["replies"] and not _reports_tokens(use):
            name = m["settings"].get("name", "?")
            files[name] = files.get(name, 0) + 1
    if not files:
        return None
    named = ", ".join(f"{name} ({n} results file{'s' * (n != 1)})" for name, n in files.items())
    return f"No token counts reported (a model file, or a server that counts none): {named}."


def _reports_tokens(use: dict[str, Any] | None) -> bool:
    """Return whether a results file's ``token_use`` has anything to show: replies with tokens
    counted, or replies cut at the limit."""
    return bool(use and use["replies"] and (use["cut"] or use["reasoning_tokens"] or use["answer_tokens"]))


def token_budget_lines(prov: dict[str, Any]) -> list[str]:
    """Return one summary line per model whose replies were cut at the token limit (none when no
    reply was cut): how many, per suite, and what to do (the token-budget table lists each run)."""
    cut: dict[str, list[dict[str, Any]]] = {}
    for m in prov["models"]:
        if (m.get("use") or {}).get("cut"):
            cut.setdefault(m["settings"].get("name", "?"), []).append(m)
    lines = []
    for name, runs in cut.items():
        by_suite: dict[str, list[int]] = {}
        for m in runs:
            counts = by_suite.setdefault(m["suite"], [0, 0])
            counts[0] += m["use"]["cut"]
            counts[1] += m["use"]["replies"]
        total = [sum(c[0] for c in by_suite.values()), sum(c[1] for c in by_suite.values())]
        limits = sorted({str(m["settings"].get("max_tokens")) for m in runs})
        parts = ", ".join(f"{suite} {c:,}/{r:,}" for suite, (c, r) in by_suite.items())
        lines.append(
            f"{name}: {total[0]:,} of {total[1]:,} replies cut at max_tokens={'/'.join(limits)} ({parts}); "
            "raise it and rerun with --retry-truncated"
        )
    return lines


def provenance_line(prov: dict[str, Any]) -> str:
    """Return the provenance's first sentence: commit, date and the pinned external data."""
    pinned = ", ".join(f"{p['list']} ({p['files']} files)" for p in prov["pinned_data"])
    changed = prov.get("changed_files") or []
    shown = ", ".join(changed[:MAX_CHANGED]) + (
        f" and {len(changed) - MAX_CHANGED} more" if len(changed) > MAX_CHANGED else ""
    )
    dirty = f" (with uncommitted changes: {shown})" if changed else ""
    return (
        f"Commit {prov['commit']}{dirty}; built {prov['date']}. External data, each file checked "
        f"against a pinned SHA-256 when fetched: {pinned}."
    )


def provenance_tables(prov: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Return the provenance's flat tables (``{"columns", "rows"}``), titled: models (settings,
    runs, tokens, cost), inputs, configs."""
    models = {
        "columns": ["suite", "results file", "settings (no keys)", "runs", "tokens", "cost (USD)"],
        "rows": [
            [
                m["suite"],
                m["results"],
                _settings_text(m["settings"]),
                str(m["runs"]),
                f"{m['tokens']:,}",
                f"{m['cost_usd']:g}",
            ]
            for m in prov["models"]
        ],
    }
    inputs = {
        "columns": ["suite", "file", "bytes", "SHA-256"],
        "rows": [[i["suite"], i["path"], f"{i['bytes']:,}", i["sha256"]] for i in prov["inputs"]],
    }
    configs = {"columns": ["config", "SHA-256"], "rows": [[c["path"], c["sha256"]] for c in prov["configs"]]}
    return [("Models", models), ("Inputs", inputs), ("Configs", configs)]


def _settings_text(settings: dict[str, Any]) -> str:
    """Return model settings as one short line: ``name=value`` pairs, built-ins marked."""
    if settings.get("no_metadata"):
        return (
            "no run metadata: results released with a paper, or written by a script that does not "
            "use the shared runner (e.g. test_random_model.py run as a script)"
        )
    seed = f", seed {settings['seed']}" if "seed" in settings else ""
    if settings.get("builtin"):
        return "built-in" + seed
    if settings.get("script"):
        return f"model file {settings['script']}{seed}"
    keep = (
        "base_url",
        "model",
        "api",
        "temperature",
        "max_tokens",
        "reasoning_effort",
        "seed",
        "api_key_env",
    )
    return ", ".join(f"{k}={settings[k]}" for k in keep if k in settings)

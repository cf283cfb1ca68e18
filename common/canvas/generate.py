"""The canvas generate stage: a set's config read (``setconfig``), its trials built (``build``)
and written with its manifest (``summary``: counts per task, size and answer, what was skipped
and why) and pictures; the fingerprints of its trials returned for the stale-results check."""

import dataclasses
import logging
from collections import Counter
from typing import Any

from common import paths
from common.canvas import shown
from common.canvas.build import Built, generate_set
from common.canvas.setconfig import SetConfig, check_every_task_runs, load_config
from common.jsonl import write_json, write_jsonl
from common.pictures.modality import TEXT, modalities_of
from common.stale import fingerprint
from common.suite import SetRef

log = logging.getLogger(__name__)


def summary(cfg: SetConfig, built: Built, seed: int) -> dict[str, Any]:
    """Return the manifest: resolved config, counts per task / size / answer, skipped requests
    with reasons."""
    answers: dict[str, Counter] = {}
    first = {t["item"]: t for t in reversed(built.trials) if t["member"] == 0}  # one item per tuple
    for item in sorted(first):
        answers.setdefault(first[item]["task"], Counter())[first[item]["goldresp"]] += 1
    return {
        "config": _config_record(cfg, seed),
        "trials": len(built.trials),
        "items": built.items,
        "trials_by_task": dict(Counter(t["task"] for t in built.trials)),
        "item_answers_by_task": {task: dict(sorted(c.items())) for task, c in answers.items()},
        "skipped": [
            {"task": t, "num_shapes": n, "what": what, "reason": reason, "count": count}
            for (t, n, what, reason), count in built.skipped.items()
        ],
        "skipped_total": sum(built.skipped.values()),
        "not_run": not_run(cfg, built),
    }


def _config_record(cfg: SetConfig, seed: int) -> dict[str, Any]:
    """Return the resolved config as the manifest keeps it (a text-only set's without ``modality``,
    so that its manifest stays as it was before modalities)."""
    record = dataclasses.asdict(cfg) | {"seed": seed}
    if modalities_of(record["modality"]) == [TEXT]:
        del record["modality"]
    return record


def not_run(cfg: SetConfig, built: Built) -> list[dict[str, Any]]:
    """Return the (task, number of shapes) pairs that got no item at all, with the reasons their
    requests were skipped (e.g. existence on a 24-shape canvas: every answer would be Yes)."""
    ran = {(trial["task"], trial["num_shapes"]) for trial in built.trials}
    out = []
    for task in cfg.tasks:
        for n in cfg.num_shapes:
            if (task, n) not in ran:
                reasons = sorted({reason for (t, size, _, reason) in built.skipped if (t, size) == (task, n)})
                out.append({"task": task, "num_shapes": n, "reasons": reasons})
    return out


def generate(
    ref: SetRef, seed: int | None = None, overrides: dict[str, Any] | None = None
) -> dict[str, dict]:
    """Write the canvas set ``ref`` from its config (``seed`` and ``overrides`` replace the
    config's): ``manifest.json``, then ``trials.jsonl.bz2`` (last: it marks a finished set). Raises
    ConfigError before anything is written when a task would have no trial. Returns the
    fingerprint of each trial (its question, options and gold answer), by Key, for the set's one
    results directory (``common.generation``)."""
    cfg = load_config(ref.config, overrides)
    if seed is not None:
        cfg = dataclasses.replace(cfg, seed=seed)
    log.info(
        "%s: seed %d, %s items per (task, size), sizes %s, tasks %s, fewshot %s",
        paths.shown(ref.config), cfg.seed, cfg.items, cfg.num_shapes, ", ".join(cfg.tasks),
        ", ".join(cfg.fewshot),
    )  # fmt: skip
    built = generate_set(cfg)
    manifest = summary(cfg, built, cfg.seed)
    check_every_task_runs(cfg, manifest, ref.config)  # before anything is written
    trials_file = ref.data / "trials.jsonl.bz2"
    trials_file.unlink(missing_ok=True)  # an old set's trials never stand beside the new manifest
    write_json(ref.data / "manifest.json", manifest)  # first: the trials file marks a finished set
    pictures = shown.draw_pictures(built.trials, cfg.geometry, ref.data / "images")
    if pictures:
        log.info("%s pictures in %s (each drawn once)", f"{pictures:,}", paths.shown(ref.data / "images"))
    write_jsonl(trials_file, built.trials)
    _log_skipped(manifest)
    log.info(
        "wrote %s trials (%s items) to %s",
        f"{len(built.trials):,}",
        f"{built.items:,}",
        paths.shown(trials_file),
    )
    return {"": {t["Key"]: _fingerprint(t) for t in built.trials}}


def _fingerprint(trial: dict[str, Any]) -> str:
    """Return what decides whether an answer to ``trial`` still stands: its question, options and
    gold answer, and in a picture set its prompts in the picture modalities too (which name the
    pictures shown)."""
    parts = [trial["text"], list(trial["expectedresp"]), trial["goldresp"]]
    return fingerprint(*parts, trial["modalities"]) if "modalities" in trial else fingerprint(*parts)


def _log_skipped(manifest: dict[str, Any]) -> None:
    """Log a warning per kind of request the set skipped, and per task that does not run at a size."""
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

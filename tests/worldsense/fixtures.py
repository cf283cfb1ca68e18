"""Tiny hand-made WorldSense test sets, written into a temporary directory by the tests."""

from pathlib import Path

from common import analysis, scoring
from common.jsonl import write_jsonl
from common.results import results_filename
from common.worldsense.analysis import results_frame

TF = ["TRUE", "FALSE"]
OPPOSITE = {"TRUE": "FALSE", "FALSE": "TRUE"}


def tf_tuple(tuple_id: str, problem: str, size: int, skin: str = "race") -> list[dict]:
    """Return a 2-trial tuple (gold TRUE then FALSE) of a 2-option problem."""
    return [
        {
            "tuple_ID": tuple_id,
            "problemname": problem,
            "problemsize": size,
            "skin": skin,
            "text": f"{tuple_id} question {i}",
            "expectedresp": TF,
            "goldresp": gold,
        }
        for i, gold in enumerate(TF)
    ]


def compl_tuple(tuple_id: str, size: int = 3, skin: str = "race") -> list[dict]:
    """Return a 3-trial tuple (gold 1, 2, 3) of the 3-option completeness problem."""
    return [
        {
            "tuple_ID": tuple_id,
            "problemname": "Compl.normal",
            "problemsize": size,
            "skin": skin,
            "text": f"{tuple_id} question {i}",
            "expectedresp": ["1", "2", "3"],
            "goldresp": gold,
        }
        for i, gold in enumerate(["1", "2", "3"])
    ]


def write_testset(
    directory: Path, trials: list[dict], answers: dict[str, list[str]], compressed: bool = False
) -> Path:
    """Write trials (Keys numbered from 100) and one results file per model; return the directory.

    ``answers[model]`` lists the answer to each trial in order; None leaves the trial unanswered.
    """
    directory.mkdir(parents=True, exist_ok=True)
    trials = [{"Key": 100 + i, **t} for i, t in enumerate(trials)]
    write_jsonl(directory / ("trials.jsonl.bz2" if compressed else "trials.jsonl"), trials)
    for model, resps in answers.items():
        rows = [{"Key": t["Key"], "resp": r} for t, r in zip(trials, resps, strict=True) if r is not None]
        write_jsonl(directory / "results" / results_filename("basic", model), rows)
    return directory


def answers_for(trials: list[dict], tuple_acc: list[int]) -> list[str]:
    """Return answers to 2-option tuples: all right where ``tuple_acc`` is 1, all wrong where 0."""
    resps = []
    for index, trial in enumerate(trials):
        right = tuple_acc[index // 2]
        resps.append(trial["goldresp"] if right else OPPOSITE[trial["goldresp"]])
    return resps


def results_df(testset: Path, fields: tuple[str, ...] = ()):
    """Return the release's joined results table of a test set, from its scored rows."""
    _, scored = analysis.load(scored_sets(testset))
    return results_frame(scored, fields)


def section(testset: Path, **options):
    """Return the WorldSense section of a test set (``common.analysis.analyse``), its results
    scored first."""
    return analysis.analyse(scored_sets(testset), **options)


def scored_sets(testset: Path) -> list:
    """Return the sets ``testset`` names, their results scored into the database (the score
    stage: the analysis only reads it)."""
    refs = analysis.resolve(str(testset), suite="worldsense")
    scoring.score(refs)
    return refs

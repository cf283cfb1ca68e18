"""The audit, the canvas sets' gate: its views blind without deleting (but the asked shape's
events, which the twin changes in number), it fails on every planted leak (``power``: each read by
a one-line rule on 70% of the trials or more), the analysis exits 1 naming the task and the view
when it fails, and it is cached by the generator's settings and code."""

import json
import re

import pandas as pd
import pytest

from common.canvas import audit, features, learners, power, views
from common.canvas.build import fresh_trials, generate_set
from common.canvas.generate import summary
from common.canvas.setconfig import SetConfig


@pytest.fixture(scope="module")
def fresh():
    return pd.DataFrame(generate_set(SetConfig(seed=8, items=4, num_shapes=[3, 12])).trials)


@pytest.mark.parametrize("task", list(views.VIEWS))
def test_views_replace_words_and_keep_every_sentence_and_mention(task, fresh):
    shape = re.compile(
        rf"{views.SHAPE}|\[asked\]|\[reference\]|\[shape \d+\]|(?:\[attribute\] ){{2}}\[attribute\]"
    )
    checked = 0
    for trial in fresh[fresh["task"] == task].to_dict("records"):
        whole = views.parts(trial["text"])
        assert whole.text() == trial["text"]
        for view in views.VIEWS[task]:
            if view.applies and not view.applies(trial["question"]):
                continue
            blinded = view.mask(whole)
            assert blinded.text() != trial["text"] or view.name == "words unbound", view.name
            checked += 1
            if view.name == "asked shape's events left out":  # the one view that deletes
                assert all(s in whole.sentences for s in blinded.sentences)
                continue
            assert len(blinded.sentences) == len(whole.sentences) and len(blinded.shots) == len(whole.shots)
            for before, after in zip(whole.sentences, blinded.sentences, strict=True):
                assert len(shape.findall(after)) == len(shape.findall(before))  # placeholders keep counts
            if view.name == "names unlinked":
                tokens = [t for s in blinded.sentences for t in set(shape.findall(s))]
                assert len(tokens) == len(set(tokens))  # no placeholder in two sentences
    assert checked


@pytest.mark.parametrize("leak", power.LEAKS, ids=lambda leak: leak.task)
def test_the_gate_fails_on_every_planted_leak(leak):
    """Each leak planted in every item (its rule then right on 70% or more of the fresh trials)
    takes the view that should see it out of chance, with the gate's own sizes and level."""
    cfg = SetConfig()
    row = power.check(leak, 1.0, cfg, audit.gate_level(cfg))
    assert row["rule"] >= 0.70, row
    assert row["caught"], row


def test_the_gate_holds_chance_on_each_views_twins():
    """Through the view that hides the input a twin varies, an item and its twin read the same,
    so on fresh trials (one member of each tuple) no learner beats chance there: the
    transitivity reference, whose twins are the other axis's corners."""
    cfg = SetConfig(num_shapes=[8])
    row = audit.audit_view(
        audit.fresh(cfg, "transitivity", 1500, "fit"),
        audit.fresh(cfg, "transitivity", 1500, "test"),
        next(v for v in views.VIEWS["transitivity"] if v.name == "reference blinded"),
        audit.gate_level(cfg),
    )
    assert row["at_chance"], row


def test_the_analysis_exits_1_naming_the_task_and_the_view(monkeypatch, tmp_path, caplog):
    """A set whose audit failed: scripts/analyse_results.py writes its report, then fails with a
    message saying which check, which task and what to do."""
    import importlib.util

    from common import paths

    cfg = SetConfig(seed=1, items=2, num_shapes=[5], tasks=["existence_tracking"], fewshot=["none"])
    built = generate_set(cfg)
    out = tmp_path / "legacy"
    out.mkdir()
    (out / "manifest.json").write_text(json.dumps(summary(cfg, built, cfg.seed)))
    (out / "trials.jsonl").write_text("".join(json.dumps(t) + "\n" for t in built.trials))
    leaked = [
        {"task": "existence_tracking", "view": "names unlinked", "blinds": "which mentions are one shape",
         "learner": "boosted trees", "trials": 2000, "train_trials": 3000, "accuracy": 0.9, "lo": 0.88,
         "hi": 0.92, "gate_lo": 0.87, "gate_hi": 0.93, "chance": 0.5, "gated": True, "at_chance": False}
    ]  # fmt: skip
    document = {"fit": 3000, "test": 2000, "level": 0.99, "views": leaked, "rules": []}
    (out / "audit.json").write_text(json.dumps(document))
    monkeypatch.setattr("common.canvas.analysis.POWER", tmp_path / "power.json")
    (tmp_path / "power.json").write_text(json.dumps({"fit": 3000, "test": 2000, "level": 0.99, "leaks": []}))
    results = tmp_path / "results" / "legacy"
    results.mkdir(parents=True)
    oracle = [{"Key": t["Key"], "resp": t["goldresp"]} for t in built.trials]
    (results / "basic___oracle___results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in oracle))
    spec = importlib.util.spec_from_file_location(
        "analyse_results", paths.ROOT / "scripts" / "analyse_results.py"
    )
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    report = tmp_path / "report.txt"
    code = script.main(
        ["-t", str(out), "--results-dir", str(results.parent), "--quiet", "--out", str(report)]
    )
    assert code == 1
    assert "FAIL" in report.read_text()  # written before the exit
    message = caplog.text
    assert (
        "canvas audit failed" in message and "existence_tracking" in message and "names unlinked" in message
    )
    assert "Fix the generator" in message


def test_the_audit_is_cached_by_the_generators_settings_and_code(monkeypatch, tmp_path):
    config = tmp_path / "small.yaml"
    config.write_text("seed: 2\nitems: 2\nnum_shapes: [3]\ntasks: [existence]\nfewshot: [none]\n")
    monkeypatch.setattr(audit, "FIT", 120)
    monkeypatch.setattr(audit, "TEST", 80)
    first = audit.write_audit(config, tmp_path / "a.json", tmp_path / "cache")
    calls = []
    monkeypatch.setattr(audit, "audit", lambda *a, **k: calls.append(1) or pytest.fail("not cached"))
    config.write_text("seed: 9\nitems: 5\nnum_shapes: [3]\ntasks: [existence]\nfewshot: [none]\n")
    pd.testing.assert_frame_equal(audit.write_audit(config, tmp_path / "b.json", tmp_path / "cache"), first)
    config.write_text("seed: 9\nitems: 5\nnum_shapes: [5]\ntasks: [existence]\nfewshot: [none]\n")
    with pytest.raises(pytest.fail.Exception):  # another generator: audited afresh
        audit.write_audit(config, tmp_path / "c.json", tmp_path / "cache")
    assert calls


def test_fresh_trials_are_one_member_of_each_tuple():
    trials = fresh_trials(SetConfig(seed=3), "existence", 40, "t")
    assert len(trials) == 40 and len({t["tuple_ID"] for t in trials}) == 40
    assert {t["member"] for t in trials} <= {0, 1, 2, 3} and len({t["member"] for t in trials}) > 1


def test_the_logits_matrix_is_dictvectorizers_entry_for_entry(fresh):
    """The logit's features go into a sparse matrix built without DictVectorizer (its per-value
    Python loop was most of the fitting time): the same columns, entries, order and values, when
    fitting and when a row names features the fit never saw."""
    import numpy as np
    from sklearn.feature_extraction import DictVectorizer

    rows = learners._logit_rows(*features.frame(fresh, views.VIEWS["existence"][0]))
    rows[0] = rows[0] | {"never seen in the fit": 3, "zero": 0.0}
    fitted_on = rows[1:]
    vectorizer = DictVectorizer().fit(fitted_on)
    names = sorted({name for row in fitted_on for name in row})
    assert names == vectorizer.feature_names_
    ours = learners._sparse_rows(rows, {name: column for column, name in enumerate(names)})
    theirs = vectorizer.transform(rows)
    assert ours.shape == theirs.shape
    for part in ("indptr", "indices", "data"):
        assert np.array_equal(getattr(ours, part), getattr(theirs, part)), part
    assert ours.data.dtype == theirs.data.dtype == np.float64


def test_the_recorded_audits_are_this_codes():
    """The audits of the default canvas sets and the power table are recorded with the code
    (common/canvas/audited/), so that make all on a fresh clone reads them: each must be the one
    for the code as it is (a change to the generator or the audit lands with its audit run again,
    by make canvas-audits), and no record of older code is left."""
    import importlib.util

    from common import paths, suites

    spec = importlib.util.spec_from_file_location("make_suites", paths.ROOT / "scripts" / "make_suites.py")
    make_suites = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_suites)
    suite = suites.get("canvas")
    configs = [
        suite.config_dir() / f"{name}.yaml"
        for name in suite.set_names()
        if make_suites.is_default(suite, name)
    ]
    wanted = audit.shipped_names(configs)
    recorded = sorted(path.name for path in audit.SHIPPED.glob("*.json"))
    assert recorded == wanted, "run `make canvas-audits` and commit common/canvas/audited/"
    for name in wanted:
        document = json.loads((audit.SHIPPED / name).read_text())
        if name.startswith("audit-"):
            assert not audit.failures(pd.DataFrame(document["views"]), name)
        else:
            assert len(document["leaks"]) == len(power.LEAKS) * len(power.STRENGTHS)

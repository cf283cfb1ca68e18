"""Problem files: the released ones load unchanged; ours carry a hash and a schema version."""

import json

import pytest
import yaml

from common.blocks.generate import load_spec
from common.blocks.problems import Problem, content_hash, dump_problem, load_problems, problem_from_json
from common.blocks.release import problems_dir
from common.errors import ConfigError, DataError
from common.paths import ROOT


def make_problem(init, goal_relations, pid="900", view="v"):
    """Return a one-view Problem whose goal board is its initial board."""
    items = sorted(i for s in init for i in s)
    return Problem(
        pid,
        [list(s) for s in init],
        [list(s) for s in init],
        {view: goal_relations},
        {item: f"odd {item}" for item in items},
        view_specs={view: {"rename": "none"}},
    )


def test_all_103_released_problem_files_load_as_they_are(released_problems):
    assert sorted(released_problems) == [f"{i:03d}" for i in range(103)]
    assert [p.id for p in released_problems.values() if not p.test] == ["000", "001", "002"]
    problem = released_problems["026"]
    assert problem.init_board == [["binder", "pizza box"], ["notebook"], ["novel"]]
    assert problem.views["one"] == [("top", None, "notebook")]
    assert problem.extra == {}


def test_paper_renaming_rule_on_released_problems(released_problems):
    problem = released_problems["001"]  # first constraint: nothing on the newspaper
    assert problem.view("one").renamed == {}
    assert problem.view("two").renamed == {"mouse pad": "accordion"}
    view = problem.view("all")
    assert view.renamed == {"keyboard": "peacoat", "mouse pad": "accordion", "writing pad": "saucepan"}
    assert view.init_board == [["accordion", "newspaper", "saucepan"], ["peacoat"]]
    assert ("mid", "newspaper", "accordion") in view.goal


def test_our_files_round_trip_and_detect_edits(tmp_path):
    problem = make_problem([["a", "b"], ["c"]], [("mid", "c", "b")])
    record = json.loads(dump_problem(problem))
    assert record["schema_version"] == 1 and record["content_hash"] == content_hash(record)
    again = problem_from_json(record, "x.json", "900")
    assert again.views == problem.views and again.view_specs == problem.view_specs
    record["init_board"] = [["b", "a"], ["c"]]
    with pytest.raises(DataError, match=r"x\.json: content_hash .* does not match"):
        problem_from_json(record, "x.json", "900")


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda r: r.pop("views"), "missing key(s) views"),
        (lambda r: r["goal_board"].append(["extra"]), "hold different items"),
        (lambda r: r["views"]["one"].append(["mid", "ghost", "novel"]), "unknown item(s) ['ghost']"),
        (lambda r: r["views"]["one"].append(["side", "novel", None]), "malformed relation"),
    ],
)
def test_malformed_problem_files_name_the_file(release, tmp_path, change, message):
    record = json.loads((problems_dir(release) / "problem_026.json").read_text())
    change(record)
    (tmp_path / "problem_026.json").write_text(json.dumps(record))
    with pytest.raises(DataError, match=r"problem_026\.json") as info:
        load_problems(tmp_path)
    assert message in str(info.value)


def test_cogsci_spec_has_the_released_entries(release):
    ours = load_spec(ROOT / "configs/blocks/cogsci_problems.yaml")
    released = yaml.safe_load((release / "dataset/simple_stack/cogsci_problems.yaml").read_text())
    assert [(e.num_obj, e.test, e.count) for e in ours.problems] == [
        (e["num_obj"], e.get("test", False), 1) for e in released
    ]
    assert ours.generator == "legacy" and [v.name for v in ours.views] == ["one", "two", "all"]
    plain = load_spec(release / "dataset/simple_stack/cogsci_problems.yaml")  # the plain-list form loads too
    assert len(plain.problems) == 103


@pytest.mark.parametrize(
    "text, message",
    [
        ("problems:\n  - num_obj: 4\n    tset: true\n", ":3: unknown config key: tset"),
        ("problems:\n  - num_obj: four\n", ":2: field 'problems.0.num_obj': expected int"),
        ("generator: random\nproblems: []\n", ":1: field 'generator': 'random' is not one of"),
        (
            "views:\n  - {name: v, constraints: 9}\nproblems:\n  - num_obj: 3\n",
            "view 'v' wants 9 constraints",
        ),
        ("- num_obj: 4\n- num_obj: 0\n", ":2: num_obj must be >= 1"),
    ],
)
def test_bad_spec_files_name_line_and_field(tmp_path, text, message):
    path = tmp_path / "set.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_spec(path)
    assert message in str(info.value) and "set.yaml" in str(info.value)

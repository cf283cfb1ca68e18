"""The suites as the shared layer sees them: one object each, one list, one meaning of -t, and a new
suite that is one package plus one line (the toy suite of docs/suites.md, built and reported)."""

import ast
import importlib
import importlib.util
import io
import re
import subprocess
import sys
import tokenize

import pytest

from common import codedeps, paths, suites
from common.errors import ConfigError, UserError
from common.jsonl import write_jsonl
from common.suite import PARTS as CONVENTIONS
from common.suite import STAGES, Suite
from tests import sandbox

PARTS = ("protocol", "baselines", "fingerprint", "results_files", "items", "score", "section", "detect")


@pytest.mark.parametrize("suite", suites.all_suites(), ids=lambda s: s.name)
def test_every_suite_names_its_parts_and_they_exist(suite):
    package = paths.ROOT / "common" / suite.name
    assert importlib.import_module(f"common.{suite.name}").SUITE is suite
    for part in PARTS + (("generate",) if suite.generated else ()):
        assert suite.part(part) is not None, part
    assert suite.part("baselines"), "a suite has built-in baselines"
    for script in suite.run_scripts:
        assert (paths.ROOT / script).is_file()
    # the package's __init__ imports nothing of the suite: each stage's closure is its own code
    init = codedeps.closure([f"common.{suite.name}"])
    assert [p.name for p in init if p.parent == package and p.name != "__init__.py"] == []


@pytest.mark.parametrize("suite", suites.all_suites(), ids=lambda s: s.name)
def test_each_part_is_in_the_same_module_of_every_suite(suite):
    """A reply scorer, a section, a protocol: each in its one room in every suite (``suite.PARTS``),
    unless the part is the shared layer's (WorldSense's random and oracle: the trials layer's)."""
    for part, (conventional, _) in CONVENTIONS.items():
        reference = getattr(suite, part)
        if reference.startswith(f"common.{suite.name}."):
            assert reference == f"common.{suite.name}.{conventional}", part
        else:
            assert not reference or not reference.startswith(tuple(f"common.{n}." for n in suites.names()))


def test_a_misspelt_part_fails_when_the_suite_is_declared():
    declared = {"name": "canvas", "title": "Canvas", "unit": "item", "headline": "strict"}
    declared["ask"] = "common.trials.ask:ask_set"  # canvas's declaration names the trials layer's
    with pytest.raises(
        ConfigError, match=r"^suite canvas: score='common.canvas.scoring:score_fil': .*no score_fil"
    ):
        Suite(**declared, score="common.canvas.scoring:score_fil")
    with pytest.raises(ConfigError, match=r"^suite canvas: pairs='common.canvas.scorin:pairs': no module"):
        Suite(**declared, pairs="common.canvas.scorin:pairs")
    with pytest.raises(ConfigError, match=r"^suite canvas: audit='common.canvas.audit:write_audits'"):
        Suite(**declared, extra={"audit": "common.canvas.audit:write_audits"})
    with pytest.raises(ConfigError, match=r"^suite nosuch: protocol: no module common.nosuch.run"):
        Suite(name="nosuch", title="No such", unit="item", headline="right")
    assert Suite(**declared, pairs=None).pairs == ""  # a part the suite has not
    assert Suite(**declared).score == "common.canvas.scoring:score_file"  # the convention


def _code_words(path) -> list[str]:
    """Return the words of a Python file's code: its identifiers and each word inside its string
    constants, f-strings and SQL among them (docstrings and comments left out: examples there name
    sets)."""
    source = path.read_text(encoding="utf-8")
    docstrings = {
        node.body[0].value.lineno
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    texts = (tokenize.STRING, getattr(tokenize, "FSTRING_MIDDLE", tokenize.STRING))
    words = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.NAME:
            words.append(token.string)
        elif token.type in texts and token.start[0] not in docstrings:
            words += re.findall(r"\w+", token.string)
    return words


def suites_named_in(path) -> list[str]:
    """Return the suites ``path``'s code names (``_code_words``, in any case: "WorldSense" is
    worldsense), in order of first mention."""
    names = set(suites.names())
    return list(dict.fromkeys(word.lower() for word in _code_words(path) if word.lower() in names))


def test_the_shared_layer_names_no_suite():
    """Only a suite's package, the list of suites, the scripts of one suite and the tests know a
    suite by name: no word of the shared modules' code (an identifier, a word of a string: a path,
    an SQL literal, a message) names one."""
    names = suites.names()
    shared = [p for p in (paths.ROOT / "common").glob("*.py") if p.name != "suites.py"]
    for package in ("models", "trials", "pictures"):
        shared += sorted((paths.ROOT / "common" / package).glob("*.py"))
    shared += [p for p in sorted((paths.ROOT / "scripts").glob("*.py")) if p.name not in ONE_SUITE]
    found = {paths.shown(p): suites_named_in(p) for p in shared}
    assert {name: hits for name, hits in found.items() if hits} == {}
    makefile = (paths.ROOT / "Makefile").read_text(encoding="utf-8").splitlines()
    named = re.compile(r"(?:^|[\s/=:(])({})(?:/|\b)".format("|".join(names)))
    assert [line for line in makefile if not line.startswith("#") and named.search(line)] == []


def test_the_check_finds_a_suite_named_in_code_as_well_as_in_strings(tmp_path):
    """Planted: a suite's name in SQL, as an identifier, as a title and in an f-string; none in a
    docstring, a comment, or a longer identifier."""
    planted = tmp_path / "planted.py"
    planted.write_text(
        '''"""The canvas of worldsense: a docstring."""\n'''
        "SQL = \"CASE s WHEN 'blocks' THEN 1 END\"  # already_said_that in a comment\n"
        "def f(canvas, pair_blocks):\n"
        '''    """WorldSense here is a docstring."""\n'''
        """    return f"{canvas} WorldSense", pair_blocks\n"""
    )
    assert suites_named_in(planted) == ["blocks", "canvas", "worldsense"]


def test_the_template_asks_a_set_of_another_format_through_its_suite_in_this_process(
    blocks_tiny, tmp_path, monkeypatch
):
    """The model template on a blocks set: the suite's run entry point (``Suite.ask``) plans and
    translates with the template's model, in this process (starting Python fails here; git may
    run), with the options given after the set."""
    _, ref = blocks_tiny
    popen = subprocess.Popen

    def no_python(command, *args, **kwargs):
        words = [command] if isinstance(command, str) else [str(word) for word in command]
        assert not any(w == sys.executable or w.endswith(".py") for w in words), f"started {command}"
        return popen(command, *args, **kwargs)

    monkeypatch.setattr(subprocess, "Popen", no_python)
    spec = importlib.util.spec_from_file_location("template", paths.ROOT / "scripts" / "test_random_model.py")
    template = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(template)
    assert template.main(["-t", str(ref.data), "--limit", "1", "--results-dir", str(tmp_path)]) == 0
    files = [p.relative_to(tmp_path / ref.name) for p in sorted(tmp_path.rglob("*___results.jsonl"))]
    assert {f.parent.name.split("___")[0] for f in files} == {"nl", "pddl"}  # plans, then PDDL facts
    assert {f.name for f in files} == {"paper___random___results.jsonl"}


def test_a_directory_is_the_set_of_the_suite_that_recognises_it_as_its_own(tmp_path, monkeypatch):
    """Each suite's detect looks for its own evidence only: WorldSense's for the trial format (its
    code names no other suite's fields), canvas's for its fields. A trial set with canvas's fields
    is claimed by both; the resolver asks every suite and gives it to canvas, whose evidence is its
    own; a plain trial set is WorldSense's; a directory no suite claims is no set."""
    monkeypatch.chdir(tmp_path)
    trial = {"Key": 1, "text": "Is it so?", "expectedresp": ["yes", "no"], "goldresp": "yes"}
    trial |= {"tuple_ID": 1, "problemname": "p"}
    write_jsonl(tmp_path / "plain" / "trials.jsonl", [trial])
    write_jsonl(tmp_path / "shapes" / "trials.jsonl", [{**trial, "task": "existence", "item": 0}])
    (tmp_path / "empty").mkdir()
    worldsense, canvas = suites.get("worldsense"), suites.get("canvas")
    assert worldsense.claims(tmp_path / "shapes") and canvas.claims(tmp_path / "shapes")
    assert (
        suites.claimant(tmp_path / "shapes") is canvas and suites.claimant(tmp_path / "plain") is worldsense
    )
    assert suites.claimant(tmp_path / "empty") is None
    assert (
        suites.resolve_set("shapes").suite == "canvas" and suites.resolve_set("plain").suite == "worldsense"
    )
    with pytest.raises(UserError, match="holds canvas data, not worldsense data"):
        suites.resolve_set("shapes", suite="worldsense")
    detect = (paths.ROOT / "common" / "worldsense" / "scoring.py").read_text(encoding="utf-8")
    detect = detect[detect.index("def detect") : detect.index("def data_fingerprint")]
    assert not re.search(r"\b(canvas|task|item)\b", detect.lower())


# scripts that belong to one suite (they ask or build only that suite's sets)
ONE_SUITE = {
    "already_said_that.py", "already_said_that_paper.py", "lm_plan.py", "codex_translate.py",
    "reproduce_blocks.py", "generate_prompts.py",
    "fetch_already_said_that_original.py", "setup_wordnet.py", "draw_canvas.py", "audit_canvas.py",
}  # fmt: skip


def test_the_stages_code_lists_follow_the_imports():
    canvas = suites.get("canvas")
    score = {paths.shown(p) for p in codedeps.closure(canvas.stage_modules("score"))}
    report = {paths.shown(p) for p in codedeps.closure(canvas.stage_modules("report"))}
    assert "common/canvas/scoring.py" in score and "common/canvas/report.py" not in score
    assert "common/canvas/report.py" in report
    assert not any(p.startswith("common/models/") for p in report), "the report reads no model code"
    out = subprocess.run(
        [sys.executable, "scripts/make_suites.py"], cwd=paths.ROOT, capture_output=True, text=True, check=True
    ).stdout
    assert f"SUITES := {' '.join(suites.names())}" in out
    for stage in STAGES:
        assert f"CODE_{stage}_canvas :=" in out


@pytest.mark.parametrize(
    "spec, key",
    [
        ("worldsense/test_set", "worldsense/test_set"),
        ("test_set", "worldsense/test_set"),
        ("canvas/standard", "canvas/standard"),
        ("standard", "canvas/standard"),
        ("configs/canvas/standard.yaml", "canvas/standard"),
        ("mixed", "already_said_that/mixed"),
        ("blocks/scaling", "blocks/scaling"),
    ],
)
def test_t_means_the_same_everywhere(spec, key, monkeypatch):
    monkeypatch.chdir(paths.ROOT)
    assert suites.resolve_set(spec).key == key


def test_a_name_two_suites_share_must_say_which():
    with pytest.raises(UserError, match=r"several suites.*-t blocks/scaling"):
        suites.resolve_set("scaling")
    with pytest.raises(UserError, match=r"no set 'nosuchset'.*canvas/standard"):
        suites.resolve_set("nosuchset")


def code_blocks(page: str) -> dict[str, str]:
    """Return the fenced blocks of a docs page whose first line is ``# <path>``, by path."""
    blocks = re.findall(r"```(?:python|yaml)\n# (\S+)(?::[^\n]*)?\n(.*?)```", page, re.DOTALL)
    return {path: text for path, text in blocks}


def test_a_new_suite_is_one_package_and_one_line(tmp_path):
    """The toy suite of docs/suites.md, copied from the page into a copy of the project: `make
    parity/mini` generates, answers, scores and analyses it; the report shows its section."""
    page = (paths.ROOT / "docs" / "suites.md").read_text(encoding="utf-8")
    blocks = code_blocks(page)
    assert set(blocks) == {
        "common/parity/__init__.py",
        "common/parity/generate.py",
        "common/parity/scoring.py",
        "common/parity/report.py",
        "common/suites.py",
        "configs/parity/mini.yaml",
    }
    repo = sandbox.make_sandbox(tmp_path / "repo")
    for path, text in blocks.items():
        if path == "common/suites.py":  # the one line
            listing = (repo / path).read_text(encoding="utf-8")
            last = '    "common.already_said_that",\n'
            (repo / path).write_text(listing.replace(last, last + text.strip("\n") + "\n"), encoding="utf-8")
        else:
            (repo / path).parent.mkdir(parents=True, exist_ok=True)
            (repo / path).write_text(text, encoding="utf-8")
    built = sandbox.run(repo, "make parity/mini")
    assert built.returncode == 0, built.stderr[-3000:]
    assert re.search(r"oracle +40 +100.0 \[", built.stdout) and re.search(r"random +40 ", built.stdout)
    shown = sandbox.run(repo, "make help")
    assert "parity/mini" in shown.stdout
    report = sandbox.run(
        repo,
        ".venv/bin/python scripts/build_report.py results/sections/parity/mini.json "
        "--html r.html --markdown r.md",
    )
    assert report.returncode == 0, report.stderr[-3000:]
    assert "Parity: mini" in (repo / "r.html").read_text(encoding="utf-8")


def test_the_behaviour_fingerprint_ignores_comments_and_docstrings(tmp_path):
    """A reworded comment or docstring, or a reformatted line, keeps the fingerprint; a changed
    statement or constant changes it."""
    source = tmp_path / "m.py"

    def of(text):
        source.write_text(text)
        return codedeps.behaviour_fingerprint([source])

    first = of('"""Doc."""\n\ndef f(x):\n    """Twice."""\n    return 2 * x  # a comment\n')
    assert first == of('"""Other doc."""\n\n\ndef f(x):\n    """Double it."""\n    return 2*x\n')
    assert first != of('"""Doc."""\n\ndef f(x):\n    """Twice."""\n    return 3 * x\n')
    assert first != of('"""Doc."""\n\ndef f(x):\n    """Twice."""\n    return "2" * x\n')

"""The original eval's data and texts: pinned extraction from the wheel, the original clean-ups,
wrong gold answers reported (left out, or kept as the original kept them), the texts read as data
(on a small hand-made wheel), and the real download (slow)."""

import hashlib
import itertools
import json
import subprocess
import zipfile
from pathlib import Path

import pytest

from common.already_said_that import generate, original
from common.already_said_that.generate import load_set_config
from common.already_said_that.original_texts import TEXT_FILES, extract_texts
from common.errors import DataError, FetchError
from common.jsonl import read_jsonl
from common.paths import CONFIGS

SYSTEM = {"role": "system", "content": "You are a helpful assistant."}
CONCISE = " (respond as concisely as possible and only include the comma-seperated words in your response):"


def _sample(question: str, ideal: str, system: dict = SYSTEM) -> dict:
    return {"input": [system, {"role": "user", "content": question}], "ideal": ideal}


def _sort(words: str, ideal: str) -> dict:
    instruction = "Sort the following comma-separated words in reversed alphabetical order" + CONCISE
    return _sample(words, ideal, {"role": "system", "content": instruction})


WORDS = ["".join(t) for t in itertools.product("abcdefghij", "klmnopqrst")]  # 100 distinct
FIXTURE = {
    original.WORDS_FILE: [{"words": WORDS}, {"words": WORDS[::-1]}],
    original.DISTRACTOR_FILES["which_is_heavier"]: [
        _sample("Is 5 pounds of lead heavier than 20 pounds of feathers? Answer Yes or No", "No"),
        _sample("Is 2 kilograms of sand heavier than 1 kilogram of iron? Answer Yes or No", "No"),  # wrong
        _sample("Is 3 pounds of wool heavier than 1 kilogram of gold? Answer Yes or No", "Yes"),
    ],
    original.DISTRACTOR_FILES["first_letters"]: [
        _sample('Spell with the first letters: "The red acrobat closed the orange raft."?', "tractor"),
        _sample('What word do the first letters spell: "Cows always run."?', "Cat"),  # wrong
        _sample('What word do the first letters spell: "Dogs often growl."?', "DOG"),
    ],
    original.DISTRACTOR_FILES["reverse_sort"]: [
        _sort("pear, apple, fig, hill", "pear, hill, hilarious, apple"),  # wrong, like line 1 upstream
        _sort("banana, cherry, apple", "Cherry, Banana, Apple"),
        _sort("kiwi, date, lime", "lime, kiwi, date"),
    ],
    original.DISTRACTOR_FILES["ambiguous_sentences"]: [
        _sample("Jane gave Joan candy because she was hungry. Who was hungry?", "Joan"),
        _sample("Jane gave Joan candy because she wasn't hungry. Who wasn't hungry?", "Jane"),
        _sample("The cup fell off the table because it was wobbly. What was wobbly?", "chair"),  # wrong
    ],
}


# The shapes of the five source files the original's texts are read from, with texts of our own.
TEXT_SOURCES = {
    TEXT_FILES["task"]: (
        'TASK_DESCRIPTION = """\\\nSay whether a word came before.\\\n Example:\n'
        "input: {distractor_question}\nresponse: [answer: {distractor_answer}]\n"
        'input: MAIN TASK - {distractor_word}\nresponse: [answer: no]\\\n"""\n'
    ),
    TEXT_FILES["distractors"]: (
        "def get_basic_distractor_example() -> DistractorSample:\n"
        '    """An example."""\n'
        '    return DistractorSample(question="Which ocean is largest?", ideal="pacific")\n'
    ),
    TEXT_FILES[
        "cot"
    ]: 'DEFAULT_COT_TEMPLATE = "Think first."\nDEFAULT_EXTRACT_ANSWER_TEMPLATE = (\n    "Now answer:"\n)\n',
    TEXT_FILES["hhh"]: (
        "HHH_MSGS = [\n"
        '    Message(role="system", content="""A helpful assistant talks."""),\n'
        '    Message(role="spacer", content=""),\n'
        '    Message(role="user", content="Hi"),\n'
        '    Message(role="assistant", content="Hello."),\n'
        '    Message(role="spacer", content=""),\n]\n'
    ),
    TEXT_FILES[
        "solver"
    ]: 'ROLE_TO_PREFIX = {"system": "S: ", "user": "U: ", "assistant": "A: ", "spacer": "==="}\n',
}


def _jsonl(records: list[dict]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in records).encode()


@pytest.fixture
def wheel(tmp_path) -> tuple[Path, Path]:
    """A small wheel holding the five files and the checksum file pinning it: (wheel, sums)."""
    path = tmp_path / original.WHEEL_NAME
    contents = {name: _jsonl(records) for name, records in FIXTURE.items()}
    contents.update({name: text.encode() for name, text in TEXT_SOURCES.items()})
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in contents.items():
            archive.writestr(name, data)
        archive.writestr("evals/__init__.py", "")
    sums = tmp_path / "sums.sha256"
    lines = [f"{hashlib.sha256(path.read_bytes()).hexdigest()}  {original.WHEEL_NAME}"]
    lines += [f"{hashlib.sha256(data).hexdigest()}  {name}" for name, data in contents.items()]
    sums.write_text("# pinned\n" + "\n".join(lines) + "\n")
    return path, sums


def test_clean_ups_and_wrong_golds_reported(tmp_path, wheel):
    path, sums = wheel
    report = original.build_original(tmp_path / "out", checksums=sums, wheel=path)
    out = tmp_path / "out"
    assert json.loads((out / "report.json").read_text()) == report
    rejected = {s: [r["line"] for r in v["rejected"]] for s, v in report["distractors"].items()}
    assert rejected == {
        "which_is_heavier": [2],
        "first_letters": [2],
        "reverse_sort": [1],
        "ambiguous_sentences": [3],
    }
    reason = report["distractors"]["which_is_heavier"]["rejected"][0]["reason"]
    assert reason == "by unit conversion the answer is 'yes'"
    assert {s: (v["records"], v["kept"]) for s, v in report["distractors"].items()} == {
        s: (3, 2) for s in report["distractors"]
    }
    heavier = read_jsonl(out / "which_is_heavier.jsonl")  # every record, the wrong one marked
    assert [r["question"] for r in heavier] == [
        "Is 5 pounds of lead heavier than 20 pounds of feathers?",
        "Is 2 kilograms of sand heavier than 1 kilogram of iron?",
        "Is 3 pounds of wool heavier than 1 kilogram of gold?",
    ]
    assert [r["answer"] for r in heavier] == ["no", "no", "yes"] and heavier[2][
        "id"
    ] == "which_is_heavier-0003"
    assert [r.get("wrong_gold") for r in heavier] == [None, reason, None]
    sort = read_jsonl(out / "reverse_sort.jsonl")
    assert sort[1]["question"] == (
        "Sort the following comma-separated words in reversed alphabetical order: banana, cherry, apple"
    )
    assert sort[1]["answer"] == "cherry, banana, apple" and sort[0]["wrong_gold"]
    assert [r["answer"] for r in read_jsonl(out / "first_letters.jsonl")] == ["tractor", "cat", "dog"]
    assert read_jsonl(out / "ambiguous_sentences.jsonl")[0]["answer"] == "joan"
    assert read_jsonl(out / "words.jsonl") == [
        {"sample": 0, "words": WORDS},
        {"sample": 1, "words": WORDS[::-1]},
    ]


def test_original_sets_hold_out_the_last_record_as_example(tmp_path, wheel, monkeypatch):
    path, sums = wheel
    original.build_original(tmp_path / "orig", checksums=sums, wheel=path)
    monkeypatch.setattr(original, "ORIGINAL_DIR", tmp_path / "orig")
    settings = load_set_config(CONFIGS / "already_said_that" / "original_reverse_sort.yaml")
    settings.samples = 2
    assert (settings.wrong_golds, settings.wording) == ("keep", "original")  # reproduction: as the original
    manifest = generate.write_set(settings, tmp_path / "set")
    assert manifest["example"]["id"] == "reverse_sort-0003"
    pool = read_jsonl(tmp_path / "set" / "distractors.jsonl")
    assert [r["id"] for r in pool] == ["reverse_sort-0001", "reverse_sort-0002"]
    assert [w["id"] for w in manifest["wrong_golds"]] == ["reverse_sort-0001"] and pool[0]["wrong_gold"]
    assert read_jsonl(tmp_path / "set" / "samples.jsonl")[1]["words"] == WORDS[::-1]
    settings.wrong_golds = "leave_out"  # the suite's own choice: the wrong gold left out
    manifest = generate.write_set(settings, tmp_path / "checked")
    assert [r["id"] for r in read_jsonl(tmp_path / "checked" / "distractors.jsonl")] == ["reverse_sort-0002"]
    assert "wrong_golds" not in manifest and manifest["example"]["id"] == "reverse_sort-0003"


def test_the_texts_are_read_from_the_wheel_as_data(tmp_path, wheel):
    path, sums = wheel
    report = original.build_original(tmp_path / "out", checksums=sums, wheel=path)
    texts = original.original_texts(tmp_path / "out")
    assert report["texts"]["from"] == sorted(TEXT_FILES.values())
    assert texts["task_description"] == (
        "Say whether a word came before. Example:\ninput: {distractor_question}\n"
        "response: [answer: {distractor_answer}]\ninput: MAIN TASK - {distractor_word}\n"
        "response: [answer: no]"
    )
    assert texts["basic_example"] == {"question": "Which ocean is largest?", "answer": "pacific"}
    assert (texts["cot_prompt"], texts["extract_prompt"]) == ("Think first.", "Now answer:")
    assert [m["role"] for m in texts["hhh_messages"]] == ["system", "spacer", "user", "assistant", "spacer"]
    assert texts["hhh_messages"][0]["content"] == "A helpful assistant talks."
    assert texts["role_prefixes"]["spacer"] == "==="
    assert (
        texts["sha256"][TEXT_FILES["cot"]]
        == hashlib.sha256(TEXT_SOURCES[TEXT_FILES["cot"]].encode()).hexdigest()
    )


@pytest.mark.parametrize(
    ("key", "source", "message"),
    [
        ("task", 'TASK_DESCRIPTION = "no slots here"\n', "has the slots \\[\\], expected"),
        ("task", "OTHER = 1\n", "no assignment to TASK_DESCRIPTION"),
        ("cot", 'DEFAULT_COT_TEMPLATE = f"{x}"\n', "expected a literal"),
        ("hhh", 'HHH_MSGS = [Message(role="user")]\n', "expected the string arguments role, content"),
        ("solver", 'ROLE_TO_PREFIX = {"user": "U: "}\n', "lacks a prefix for system, user, assistant"),
        (
            "distractors",
            "def get_basic_distractor_example():\n    return None\n",
            "distractors.py:2: expected a call",
        ),
        ("task", "TASK_DESCRIPTION = (\n", "not Python source"),
        ("distractors", "def other():\n    pass\n", "no get_basic_distractor_example"),
    ],
)
def test_a_text_file_of_another_shape_is_a_data_error_naming_it(key, source, message):
    sources = {name: text.encode() for name, text in TEXT_SOURCES.items()}
    sources[TEXT_FILES[key]] = source.encode()
    with pytest.raises(DataError, match=message) as caught:
        extract_texts(sources)
    assert TEXT_FILES[key] in str(caught.value)


def test_a_file_that_differs_from_its_pin_is_refused(tmp_path, wheel):
    path, sums = wheel
    text = sums.read_text()
    name = original.DISTRACTOR_FILES["first_letters"]
    lines = [("0" * 64 + "  " + name) if line.endswith(name) else line for line in text.splitlines()]
    sums.write_text("\n".join(lines) + "\n")
    with pytest.raises(DataError, match=f"SHA-256 mismatch for {name}"):
        original.build_original(tmp_path / "out", checksums=sums, wheel=path)
    assert not (tmp_path / "out" / "report.json").exists()
    sums.write_text("\n".join(line for line in lines if original.WHEEL_NAME not in line) + "\n")
    with pytest.raises(DataError, match="no pinned SHA-256"):
        original.build_original(tmp_path / "out", checksums=sums, wheel=path)


def test_a_record_without_the_suffix_to_trim_is_an_error():
    with pytest.raises(DataError, match=r"x\.jsonl:7: the question does not end with ' Answer Yes or No'"):
        original.clean_record("which_is_heavier", _sample("Is 1 pound of lead heavier?", "No"), "x.jsonl:7")
    with pytest.raises(DataError, match="respond as concisely"):
        original.clean_record("reverse_sort", _sample("a, b", "b, a"), "x.jsonl:1")


def test_a_failed_download_is_a_fetch_error_and_keeps_nothing(tmp_path):
    def offline(command, **kwargs):
        assert command[-1] == "evals==3.0.1.post1" and "--no-deps" in command
        return subprocess.CompletedProcess(command, 1, "", "ERROR: Could not find a version\nNo network")

    with pytest.raises(FetchError, match=r"pip could not download evals==3\.0\.1\.post1.*No network"):
        original.download_wheel(tmp_path / "cache", "0" * 64, run=offline)

    def wrong_file(command, **kwargs):
        dest = Path(command[command.index("--dest") + 1])
        (dest / original.WHEEL_NAME).write_bytes(b"not the wheel")
        return subprocess.CompletedProcess(command, 0, "", "")

    with pytest.raises(FetchError, match="SHA-256 mismatch"):
        original.download_wheel(tmp_path / "cache", "0" * 64, run=wrong_file)
    assert list((tmp_path / "cache").iterdir()) == []


def test_the_wheel_comes_from_the_data_mirror_when_it_holds_it(tmp_path, monkeypatch):
    """An offline machine: $DATA_MIRROR/already_said_that_original/ holds the wheel, pip is never
    run; a mirror copy that is not the pinned wheel is refused and nothing is kept."""
    mirror = tmp_path / "mirror" / original.MIRROR_DIR
    mirror.mkdir(parents=True)
    (mirror / original.WHEEL_NAME).write_bytes(b"the wheel")
    monkeypatch.setenv("DATA_MIRROR", str(tmp_path / "mirror"))

    def no_pip(command, **kwargs):
        raise AssertionError("pip ran although the mirror holds the wheel")

    digest = hashlib.sha256(b"the wheel").hexdigest()
    wheel = original.download_wheel(tmp_path / "cache", digest, run=no_pip)
    assert wheel.read_bytes() == b"the wheel" and wheel.parent == tmp_path / "cache"
    with pytest.raises(FetchError, match=r"SHA-256 mismatch .*\(the copy in .*mirror"):
        original.download_wheel(tmp_path / "other", "0" * 64, run=no_pip)
    assert list((tmp_path / "other").iterdir()) == []


@pytest.mark.slow
def test_real_wheel_from_pypi(tmp_path):
    """Needs the network to PyPI (46 MB): skipped with the reason when pip cannot download."""
    try:
        report = original.build_original(tmp_path)
    except FetchError as exc:
        pytest.skip(f"PyPI not reachable: {exc}")
    counts = {s: (v["records"], v["kept"]) for s, v in report["distractors"].items()}
    assert counts == {
        "which_is_heavier": (183, 183),
        "first_letters": (100, 100),
        "reverse_sort": (25, 23),
        "ambiguous_sentences": (60, 60),
    }
    assert [r["line"] for r in report["distractors"]["reverse_sort"]["rejected"]] == [1, 6]
    assert report["words"]["samples"] == 500

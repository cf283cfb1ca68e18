"""Reproduction mode against the original eval's own code (evals==3.0.1.post1, its pinned wheel):
the messages a run sends, turn by turn, are byte for byte those the original's solvers build for
the same conversation (the same sample, the turns the suite's seed drew), under each prompting
(direct, cot, hhh) and on every variant of the original's data, and a generated set in the
original's wording; the original's loop ends each conversation on the same turn with the same
metrics, also when the context overflows (its solver's error handling: the error is the reply).
The suite's run goes through the real script and a local server; the original's through
``tests/already_said_that/original_code.py`` (its modules imported from the wheel, its completion functions
recording). The wheel comes from the project's download cache, else is downloaded once into
pytest's cache (46 MB from PyPI; the test is skipped, saying so, when PyPI cannot be reached)."""

import hashlib
import json
import math
import sys
import zipfile
from pathlib import Path

import pytest

from common.already_said_that import analysis, generate, original
from common.already_said_that.generate import load_set, load_set_config
from common.already_said_that.run import read_turns, run_paths
from common.already_said_that.wording import wording_of
from common.errors import FetchError
from common.fetch import read_checksums, sha256_file
from common.jsonl import read_jsonl
from common.models.stub_server import StubServer
from common.paths import CONFIGS
from common.results import read_results
from tests.already_said_that.fixtures import QUESTIONS, write_set
from tests.already_said_that.original_code import BASE_MODEL, original_code
from tests.already_said_that.test_run import load_main, stub_config

ORIGINAL_NAMES = {  # our variant -> the original's
    "which_is_heavier": "which-is-heavier",
    "first_letters": "first-letters",
    "reverse_sort": "reverse-sort-words-eng",
    "ambiguous_sentences": "ambiguous-sentences",
    "distractorless": "distractorless",
}
CONVERSATIONS = 3  # per set and prompting
DECODING = {"temperature": 1, "max_tokens": 512}  # the original's solvers' extra_options


@pytest.fixture(scope="session")
def evals_wheel(request) -> Path:
    """The pinned evals wheel: the project's download cache, else pytest's cache (downloaded)."""
    digest = read_checksums(original.CHECKSUMS)[original.WHEEL_NAME]
    cached = original.ORIGINAL_DIR / "wheel" / original.WHEEL_NAME
    if cached.is_file() and sha256_file(cached) == digest:
        return cached
    try:
        return original.download_wheel(Path(request.config.cache.mkdir("evals_wheel")), digest)
    except FetchError as exc:
        pytest.skip(f"the original's wheel is not cached and PyPI is not reachable: {exc}")


@pytest.fixture(scope="module")
def reproduction(evals_wheel, tmp_path_factory):
    """The original's data and texts built from the wheel, its source extracted, and the original_*
    sets (their first samples) built from the shipped configs; the module sees that data."""
    root = tmp_path_factory.mktemp("reproduction")
    with zipfile.ZipFile(evals_wheel) as archive:
        members = [n for n in archive.namelist() if n.startswith("evals/") and n.endswith(".py")]
        members += [*original.DISTRACTOR_FILES.values(), original.WORDS_FILE]
        archive.extractall(root / "source", members)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(original, "ORIGINAL_DIR", root / "original")
        original.build_original(root / "original", wheel=evals_wheel)
        sets = {}
        for variant in ORIGINAL_NAMES:
            settings = load_set_config(CONFIGS / "already_said_that" / f"original_{variant}.yaml")
            # the first conversations, once, on seed 0's streams (the seeds' samples: a test below)
            settings.samples, settings.play, settings.seeds, settings.first_seed = CONVERSATIONS, None, 1, 0
            generate.write_set(settings, root / "sets" / settings.name)
            sets[variant] = load_set(root / "sets" / settings.name)
        yield {"root": root, "sets": sets, "texts": original.original_texts()}


def policy(texts: dict):
    """Return a model for both sides: its reply is a function of the whole request, so the two
    stay in step exactly as long as their requests are the same. It reasons when asked to (CoT),
    answers main-task words from the conversation (a few wrong, a few malformed, some with text
    around the answer), answers questions with words that enter the adversarial pool, and a
    base model runs on into the next turn (cut at the role markers)."""

    def reply(request: dict) -> str:
        said = request.get("messages", request.get("prompt"))  # what the model reads, nothing else
        draw = int(hashlib.sha256(json.dumps(said, sort_keys=True).encode()).hexdigest(), 16) % 1000
        if "messages" in request:
            messages = request["messages"]
            users = [m["content"] for m in messages if m["role"] == "user"]
            last, seen = users[-1], users[:-1].count(users[-1]) > 0
            if messages[-1] == {"role": "system", "content": texts["cot_prompt"]}:
                return f"Step by step: the message is {last!r}. Perhaps [answer: perhaps]."
        else:
            prompt = request["prompt"]
            last = prompt.rsplit("\nUser: ", 1)[1].rsplit("\nAssistant:", 1)[0]
            seen = prompt.count(f"\nUser: {last}\n") > 1
        if last.startswith("MAIN TASK - "):
            right = "yes" if seen else "no"
            answer = {"yes": "no", "no": "yes"}[right] if draw < 25 else right
            text = f"I would say {answer}" if 25 <= draw < 35 else f"[answer: {answer}]"
            text = f"Let me see. {text} Done." if 35 <= draw < 200 else text
        else:
            options = ["yes", "no", "blue whale", last.split()[-1].strip("?.!,'\"").lower()]
            text = "No idea." if draw % 17 == 0 else f"[answer: {options[draw % 4]}]"
        return text + (
            "\nUser: MAIN TASK - zebra\nAssistant: [answer: yes]"
            if "prompt" in request and draw % 3 == 0
            else ""
        )

    return reply


def run_suite(
    tmp_path: Path, data, prompting: str, answer, max_context: int | None = None
) -> tuple[list[dict], list[dict], list[dict]]:
    """Play the first conversations of ``data`` through the script against a local server whose
    replies come from ``answer`` (refusing requests longer than ``max_context`` words, max_tokens
    included, as too long for its context); return (records, turn lines, request bodies in order)."""
    with StubServer(max_context=max_context) as server:
        server.answer = lambda prompt: answer(server.requests[-1]["body"])
        settings = {
            "concurrency": 1,
            **({"api": "completions", "model": BASE_MODEL} if prompting == "hhh" else {}),
        }
        config = stub_config(tmp_path, server, **settings)
        out = tmp_path / f"{data.name}-{prompting}"
        argv = ["-t", str(data.path), "--model", str(config), "--prompting", prompting, "--no-cache"]
        assert load_main()([*argv, "--results-dir", str(out), "--loglevel", "WARNING"]) == 0
        bodies = [r["body"] for r in server.requests]
    files = run_paths(data.name, "stub", out, prompting)
    return read_results(files["results"]), read_turns(files["turns"]), bodies


def compare(tmp_path, data, prompting, variant, records_of_original, code, max_context=None) -> dict:
    """Play ``data`` with the suite and, conversation by conversation, with the original's code;
    assert every request and every conversation's metrics agree; return counts of what was checked.
    With ``max_context`` the server refuses longer requests, and so does the original's API
    (``overflowing``)."""
    records, turns, bodies = run_suite(tmp_path, data, prompting, code.sent.policy, max_context)
    if max_context is not None:
        code.sent.policy = overflowing(code.sent.policy, max_context, turns)
    evaluation = code.eval_for(ORIGINAL_NAMES[variant], records_of_original, max_turns=100)
    solver = code.solver(prompting, DECODING)
    samples = {s["sample"]: s["words"] for s in data.samples}
    checked = {"requests": 0, "turns": 0, "distractors": 0}
    for record in sorted(records, key=lambda r: r["Key"]):
        code.sent.requests.clear()
        mine = [t for t in turns if t["Key"] == record["Key"]]
        metrics = code.replay(evaluation, solver, samples[record["Key"]], mine)
        theirs = code.sent.requests
        sent, bodies = bodies[: len(theirs)], bodies[len(theirs) :]
        for index, (ours, original_request) in enumerate(zip(sent, theirs, strict=False)):
            where = f"{data.name} {prompting} conversation {record['Key']} request {index + 1}"
            assert "seed" not in ours, where  # the original sends none
            for key in ("model", "temperature", "max_tokens", "stop"):
                assert ours.get(key) == original_request.get(key), f"{where}: {key}"
            text = "messages" if "messages" in ours else "prompt"
            assert canonical(ours[text]) == canonical(original_request[text]), where  # byte for byte
        assert metrics["unplayed"] == [], f"the original ended conversation {record['Key']} sooner"
        assert len(sent) == len(theirs), f"the suite ended conversation {record['Key']} sooner"
        assert metrics["num_turns"] == record["turns"] and metrics["num_distractors"] == record["distractors"]
        assert metrics["violation_occurred"] == record["violation_occurred"]
        assert (metrics["was_false_pos"], metrics["was_false_neg"]) == (
            record["ended"] == "false_positive",
            record["ended"] == "false_negative",
        )
        accuracy = record["distractor_accuracy"]
        assert (math.isnan(metrics["distractor_accuracy"]) and accuracy is None) or metrics[
            "distractor_accuracy"
        ] == pytest.approx(accuracy)
        checked["requests"] += len(theirs)
        checked["turns"] += len(mine)
        checked["distractors"] += record["distractors"]
    assert bodies == [], "the suite sent requests the original did not"
    return checked


def overflowing(policy, max_context: int, turns: list[dict]):
    """Return ``policy`` behind an API that refuses a chat request longer than ``max_context``
    words (its messages' words and max_tokens, the local server's count) with the error the
    original's solver expects of a context overflow (``code`` context_length_exceeded): its
    ``_handle_completion_exception`` makes the error's message the reply. The message is the one
    the suite's run was given (its turn log, in order): the text is the server's, the rule the eval's."""
    errors = iter([t["error"] for t in sorted(turns, key=lambda t: (t["Key"], t["turn"])) if "refused" in t])

    def reply(request: dict) -> str:
        asked = sum(len(m["content"].split()) for m in request["messages"]) + request["max_tokens"]
        if asked > max_context:
            error = sys.modules["openai"].BadRequestError()  # the SDK's, as the stand-in names it
            message = next(errors, None)
            assert message is not None, f"the original overflows ({asked} words) where the suite did not"
            error.code, error.message = "context_length_exceeded", message
            error.body = {"code": error.code, "message": error.message}
            raise error
        return policy(request)

    return reply


def canonical(value) -> bytes:
    """Return ``value`` as the bytes of its JSON (keys sorted: a message is role and content, in
    whichever order a client writes them)."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False).encode("utf-8")


def wheel_records(root: Path, variant: str):
    """Return the loader of the original's registry data: a variant's records from the wheel."""
    files = {ORIGINAL_NAMES[v]: original.DISTRACTOR_FILES[v] for v in original.DISTRACTOR_FILES}
    return lambda name: [
        json.loads(line) for line in (root / "source" / files[name]).read_text().splitlines() if line.strip()
    ]


@pytest.mark.parametrize("prompting", ["direct", "cot", "hhh"])
@pytest.mark.parametrize("variant", list(ORIGINAL_NAMES))
def test_a_run_sends_what_the_original_sends(reproduction, tmp_path, monkeypatch, variant, prompting):
    monkeypatch.setattr(original, "ORIGINAL_DIR", reproduction["root"] / "original")
    data = reproduction["sets"][variant]
    with original_code(reproduction["root"] / "source", policy(reproduction["texts"])) as code:
        checked = compare(
            tmp_path, data, prompting, variant, wheel_records(reproduction["root"], variant), code
        )
    assert checked["requests"] == checked["turns"] * (2 if prompting == "cot" else 1) > 3 * CONVERSATIONS
    assert (checked["distractors"] > 0) == (variant != "distractorless")


def test_a_generated_set_in_the_originals_wording_sends_what_the_original_sends(
    reproduction, tmp_path, monkeypatch
):
    """A generated set in the original's wording: the suite's own questions in the original's texts
    (the original's processing of its records is given ours, its " Answer Yes or No" put back)."""
    monkeypatch.setattr(original, "ORIGINAL_DIR", reproduction["root"] / "original")
    data = load_set(
        write_set(tmp_path / "heavier", "which_is_heavier", samples=CONVERSATIONS, wording="original")
    )

    def records(name):
        questions = [*QUESTIONS["which_is_heavier"], (data.example["question"], data.example["answer"])]
        return [{"input": [{}, {"content": q + " Answer Yes or No"}], "ideal": a} for q, a in questions]

    with original_code(reproduction["root"] / "source", policy(reproduction["texts"])) as code:
        checked = compare(tmp_path, data, "direct", "which_is_heavier", records, code)
    assert checked["distractors"] > 0


def test_the_original_sets_play_the_originals_samples_seed_by_seed(reproduction, tmp_path, monkeypatch):
    """Seeds 1, 2 and 3 of every original_* set (the shipped config, all 500 samples) play the
    250 samples the original's own eval picked with that seed (``AlreadySaidThat._get_samples``
    run from the wheel on its word file), sample for sample; a run of the set asks exactly those,
    once per seed."""
    monkeypatch.setattr(original, "ORIGINAL_DIR", reproduction["root"] / "original")
    lines = (reproduction["root"] / "source" / original.WORDS_FILE).read_text().splitlines()
    word_file = [json.loads(line) for line in lines if line.strip()]
    index = {tuple(record["words"]): n for n, record in enumerate(word_file)}
    compared = {}
    for variant, name in ORIGINAL_NAMES.items():
        settings = load_set_config(CONFIGS / "already_said_that" / f"original_{variant}.yaml")
        assert (settings.first_seed, settings.seeds, settings.play) == (1, 3, 250)
        generate.write_set(settings, tmp_path / "sets" / settings.name)
        data = load_set(tmp_path / "sets" / settings.name)
        records = wheel_records(reproduction["root"], variant)
        with original_code(reproduction["root"] / "source", policy(reproduction["texts"])) as code:
            for seed in (1, 2, 3):
                evaluation = code.eval_for(name, records, seed=seed)
                evaluation.get_samples = lambda: [dict(record) for record in word_file]
                theirs = sorted(index[tuple(s["words"])] for s in evaluation._get_samples())
                ours = sorted(s["sample"] for s in data.samples if data.plays(s, seed - settings.first_seed))
                assert [s["words"] for s in data.samples] == [r["words"] for r in word_file]
                assert ours == theirs, (variant, seed)
                compared[(variant, seed)] = len(ours)
    assert set(compared.values()) == {250} and len(compared) == 15
    argv = ["-t", str(data.path), "--model", "random", "--results-dir", str(tmp_path / "results")]
    assert load_main()([*argv, "--loglevel", "WARNING"]) == 0
    played = read_results(run_paths(data.name, "random", tmp_path / "results")["results"], all_draws=True)
    assert sorted((r.get("draw", 0), r["Key"]) for r in played) == sorted(
        (draw, s["sample"]) for draw in range(3) for s in data.samples if data.plays(s, draw)
    )


def test_the_original_data_keeps_every_question_and_names_the_wrong_golds(reproduction):
    """Reverse sort on the original data: all 24 questions in the pool (the 25th is the worked
    example), the two with a wrong gold kept and listed, as the original played them."""
    data = reproduction["sets"]["reverse_sort"]
    assert len(data.pool) == 24 and data.example["id"] == "reverse_sort-0025"
    manifest = json.loads((data.path / "manifest.json").read_text())
    assert [w["id"] for w in manifest["wrong_golds"]] == ["reverse_sort-0001", "reverse_sort-0006"]
    kept = read_jsonl(reproduction["root"] / "original" / "reverse_sort.jsonl")
    assert len(kept) == 25 and sum(bool(r.get("wrong_gold")) for r in kept) == 2


@pytest.mark.filterwarnings("ignore:The 'warn' function is deprecated")  # the original's logging.warn
@pytest.mark.parametrize("room", [90, 150])
def test_overflows_follow_the_originals_rules(reproduction, tmp_path, monkeypatch, caplog, room):
    """A request too long for the context: the original's solver made the error message the reply,
    which has no [answer: ...]. On a distractor turn the game went on (the message in the history),
    on a main-task turn the conversation ended there as a violation. The suite's run against a
    server with a small context sends what the original sends, ends each conversation on the same
    turn with the same metrics, and counts every conversation (``room``: words of conversation the
    context holds beyond the system message and max_tokens)."""
    monkeypatch.setattr(original, "ORIGINAL_DIR", reproduction["root"] / "original")
    data = reproduction["sets"]["which_is_heavier"]
    system = wording_of(data.config, data.example, distractors=True).system
    limit = len(system.split()) + DECODING["max_tokens"] + room
    with original_code(reproduction["root"] / "source", policy(reproduction["texts"])) as code:
        checked = compare(
            tmp_path,
            data,
            "direct",
            "which_is_heavier",
            wheel_records(reproduction["root"], "which_is_heavier"),
            code,
            max_context=limit,
        )
    records, turns = (
        read_results(run_paths(data.name, "stub", tmp_path / f"{data.name}-direct")["results"]),
        read_turns(run_paths(data.name, "stub", tmp_path / f"{data.name}-direct")["turns"]),
    )
    refused = [t for t in turns if "refused" in t]
    assert {t["kind"] for t in refused} == {"main", "distractor"}  # both rules were played
    assert checked["requests"] == len(turns)  # every turn asked, the refused ones too
    # the original took its own way: its solver logged each overflow and replied with the error
    said = "context length exceeded, using error message as solver response"
    assert sum(said in r.getMessage() for r in caplog.records) == len(refused)
    metrics = analysis.seed_metrics(analysis.conversation_frame(records))
    assert all(r["ended"] == "refused" for r in records)  # the small context ended every one ...
    assert metrics["n"] == metrics["refused"] == len(records)  # ... and none is left out
    assert metrics["violation_rate"] == 1.0 and metrics["avg_num_turns"] > 8

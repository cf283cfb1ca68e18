"""Asking a model Already Said That: play each conversation of a set, log its turns, sum it up.

The set (``generate.load_set``) gives one item per sample (``items``). Each conversation is one
item of the shared runner (``common.models.run_items``, Key = sample id):
``ConversationRunner.answer`` plays its turns in order, sending the whole history every turn
through the prompting chosen (``prompting.PROMPTINGS``: direct, cot, hhh) in the set's wording
(``wording.py``: the original's texts or the suite's; HTTP models answer through the response
cache, so a rerun replays finished turns for free), writes the conversation's turns to the turn
log, and returns the one results record.

A request the server refuses because the context is too long follows the original's rule, which
turned the error message into the reply: the turn has no valid answer. On a distractor turn that
is a format violation and the game goes on (the message stays in the history, as the original's
did); on a main-task turn the conversation ends there, recorded as ``refused`` (the runner counts
it apart, ``--retry-errors`` plays it again) and counted by the metrics as the original counts
it, a violation (``analysis.seed_metrics``). A content filter (a request refused as
``content_filter`` or ``invalid_prompt``, or a reply withheld with finish_reason
``content_filter``) stops the run instead (``FilteredStop``), as the original's OpenAI solver
raised on it, unless the runner is told to play on (``filtered="violation"``: the error is the
reply, as the original's Gemini and Together solvers made it). ``cost.py`` prices a run before it
starts and sums it up after.
"""

import functools
import json
import logging
import threading
from pathlib import Path
from typing import Any, TextIO

from common import paths
from common.already_said_that.generate import SetData
from common.already_said_that.prompting import PROMPTINGS, Asked
from common.already_said_that.prompts import Conversation, Outcome, Turn
from common.already_said_that.wording import DEFAULT as DEFAULT_WORDING
from common.already_said_that.wording import Wording, wording_name, wording_of
from common.errors import DataError, UserError
from common.jsonl import cut_torn_tail, dumps
from common.models.base import Message, Model, ModelError, Reply, RequestRefused, reasoning_fields
from common.results import draw_of, read_results, record_id, results_filename

log = logging.getLogger(__name__)
SUITE = "already_said_that"
RESULTS_DIR = paths.RESULTS / SUITE
PROMPTING = "direct"  # the original's "generation/direct": the reply is the answer, no reasoning asked


FILTERED = ("content_filter", "invalid_prompt")  # refusals the original's OpenAI solver raised on


class FilteredStop(ModelError):
    """A content filter refused a request or withheld a reply: the run stops (the original's
    OpenAI solver raised, which ended its run), the conversations written so far are kept."""


def run_paths(
    set_name: str, model_name: str, results_root: Path = RESULTS_DIR, prompting: str = PROMPTING
) -> dict[str, Path]:
    """Return the files of one run: ``results`` (one line per conversation), ``turns`` (the turn
    log), ``summary`` (the run's summary JSON), all in results/already_said_that/<set>/, named
    ``<prompting>___<model>___...``."""
    results = results_root / set_name / results_filename(prompting, model_name)
    stem = results.name.removesuffix("results.jsonl")
    return {
        "results": results,
        "turns": results.with_name(stem + "turns.jsonl"),
        "summary": results.with_name(stem + "summary.json"),
    }


def check_prompting(model: Model, prompting: str) -> None:
    """Raise UserError when ``model`` cannot be asked with ``prompting``: a built-in answers
    directly only, and ``hhh`` renders a text prompt for a base model (``api: completions``)."""
    config = getattr(model, "config", None)
    if prompting != PROMPTING and config is None:
        raise UserError(
            f"the built-in {model.name!r} answers directly: use --prompting {PROMPTING} "
            f"({prompting} is for models of configs/models/)"
        )
    if prompting == "hhh" and config.api != "completions":
        raise UserError(
            f"--prompting hhh writes a plain-text transcript for a base model: the config of "
            f"{model.name!r} needs api: completions (it has api: {config.api})"
        )


def check_wording(results: Path, wording: str) -> None:
    """Raise UserError when ``results`` holds conversations played in another wording than
    ``wording`` (the file was written before the set's wording changed): a results file holds
    one wording, so that its metrics say what the model read."""
    if not results.is_file():
        return
    used = {str(r.get("wording") or DEFAULT_WORDING) for r in read_results(results, all_draws=True)}
    if used - {wording}:
        raise UserError(
            f"{paths.shown(results)} holds conversations played with wording {', '.join(sorted(used))}; "
            f"this set's wording is {wording}: move that run's files aside (or use another "
            "--results-dir) before playing it again"
        )


def items(data: SetData, limit: int | None = None) -> list[dict[str, Any]]:
    """Return the runner's items: one per sample (the first ``limit``, ``SetData.limited``: on a
    set whose seeds each play their own pick, those every seed plays, as a warning says), Key =
    sample id."""
    samples = data.limited(limit)
    if limit is not None and data.config.get("play") is not None:
        log.warning(
            "--limit %d on %s, whose %s seeds each play %s of its %s conversations: the first %d that "
            "every seed plays (samples %s), each played by all its seeds",
            limit, data.name, data.config.get("seeds") or 1, data.config["play"], len(data.samples),
            len(samples), ", ".join(str(s["sample"]) for s in samples),
        )  # fmt: skip
    return [
        {"Key": sample["sample"], "sample": sample["sample"], "words": sample["words"]} for sample in samples
    ]


def turn_item(key: Any, turn: Turn, draw: int = 0) -> dict[str, Any]:
    """Return what a built-in solver may read about a turn: the sample's Key, the turn number, its
    kind and its gold answer; and, for a repeated play of the conversation, its ``draw`` (which
    HTTP models read too: each draw is seeded and cached apart)."""
    return {
        "Key": key,
        **({"draw": draw} if draw else {}),
        "turn": turn.index,
        "kind": turn.kind,
        "gold": turn.gold,
    }


class ConversationRunner:
    """Plays conversations of one set for the shared runner, appending their turns to a log;
    each turn is asked with ``prompting`` (a name of ``prompting.PROMPTINGS``) in the set's
    wording (read when a model first reads the conversation: the built-in ``random`` and
    ``oracle`` never do, so they play a set of the original's wording without its texts)."""

    def __init__(
        self,
        data: SetData,
        turns_path: Path,
        model_name: str,
        prompting: str = PROMPTING,
        filtered: str = "stop",
    ):
        self.filtered = filtered  # a content filter: "stop" the run, or play on as a "violation"
        self.data = data
        self.model_name = model_name
        self.prompting = prompting
        self.ask = PROMPTINGS[prompting]
        self.wording_name = wording_name(data.config)
        self.turns_path = Path(turns_path)
        self._handle: TextIO | None = None  # the log, opened (a torn tail cut) at the first write
        self._lock = threading.Lock()

    @functools.cached_property
    def wording(self) -> Wording:
        """Return the set's wording (UserError naming ``make asat-original`` when it is the
        original's and its texts are not there)."""
        return wording_of(self.data.config, self.data.example, self.data.has_distractors)

    @property
    def system(self) -> str:
        """Return the system message of every conversation: the task description."""
        return self.wording.system

    def answer(self, model: Model, item: dict[str, Any]) -> dict[str, Any]:
        """Play the conversation of ``item`` to its end and return its results record.

        Its turn lines are appended to the turn log in one write before the record is returned
        (the runner then writes the record), so a conversation's turns are contiguous and a
        re-played conversation's later block supersedes an earlier one (``read_turns``).
        """
        conversation = self.data.conversation(item, draw_of(item))
        reads = getattr(model, "reads_messages", True)
        wording = self.wording if reads else None
        messages: list[Message] = [{"role": "system", "content": wording.system}] if wording else []
        played: list[dict[str, Any]] = []
        refused = None
        while not conversation.over:
            turn = conversation.next_turn()
            messages.append({"role": "user", "content": turn.message})
            refusal = None
            try:
                asked = self.ask(model, messages, turn_item(item["Key"], turn, draw_of(item)), wording)
                self._check_filter(item, turn, asked.finish_reasons or [asked.reply.finish_reason], "")
            except RequestRefused as exc:
                self._check_filter(item, turn, [exc.kind], exc.message)
                refusal = {"refused": exc.kind, "error": exc.message}
                if turn.kind == "main":  # the original: a violation, the conversation ends
                    refused = exc
                    played.append({**self._turn_fields(item, turn), **refusal})
                    break
                asked = Asked(Reply(exc.message, attempts=0))  # the original: the error is the reply
            messages.append({"role": "assistant", "content": asked.reply.text})
            outcome = conversation.judge(asked.reply.text)
            played.append(
                {**self._turn_fields(item, turn), **_reply_fields(asked, outcome), **(refusal or {})}
            )
        self._write_turns(played)
        record = self._record(item, conversation, played, refused)
        if hasattr(model, "conversation_over"):  # a person playing is told how it ended
            model.conversation_over(record)
        return record

    def _check_filter(self, item: dict[str, Any], turn: Turn, kinds: list[Any], message: str) -> None:
        """Raise FilteredStop when a content filter refused the turn's request or withheld its
        reply (``kinds``: the refusal's kind, or the replies' finish reasons), unless told to play
        on (``filtered``)."""
        kind = next((k for k in kinds if k in FILTERED), None)
        if kind is None or self.filtered != "stop":
            return
        said = message.rstrip(". ") if message else "finish_reason content_filter: the reply withheld"
        raise FilteredStop(
            f"a content filter stopped the run at turn {turn.index} of conversation {item['Key']} "
            f"of {self.data.name} (seed {self.data.first_seed + draw_of(item)}), {kind} ({said}). The "
            "original eval's OpenAI solver raised on such an error, which ended its run, and so does "
            "this one; the conversations written are kept. To play on as its Gemini and Together "
            "solvers did (the error is the reply: a violation), run again with --filtered-as-violations"
        )

    def _record(
        self,
        item: dict[str, Any],
        conversation: Conversation,
        played: list[dict[str, Any]],
        refused: RequestRefused | None,
    ) -> dict[str, Any]:
        """Return the results record of a conversation played to its end (``played``: its turn
        lines; a refused distractor turn was judged, a violation, and counts as answered wrong)."""
        answered = [line for line in played if "refused" not in line]
        judged = [line for line in played if "correct" in line]
        distractor_turns = [line for line in judged if line["kind"] == "distractor"]
        correct = sum(line["correct"] for line in distractor_turns)
        record = {
            "Key": item["Key"],
            "sample": item["sample"],
            "set": self.data.name,
            "variant": self.data.config.get("variant"),
            "pairing": self.data.pairing,  # runs sharing it played the same samples and streams
            "model": self.model_name,
            "prompting": self.prompting,
            "wording": self.wording_name,  # the texts the model read (wording.py)
            "turns": conversation.turns_done,
            "distractors": conversation.distractors_done,
            "distractors_correct": correct,
            "distractor_accuracy": correct / len(distractor_turns) if distractor_turns else None,
            "violations": sum(line["violation"] for line in answered),  # format violations of the replies
            # the original's flag (last reply); a refused main-task turn's reply was the error message
            "violation_occurred": bool(refused) or conversation.violation_occurred,
            "refused_turns": sum("refused" in line for line in played),
            "ended": "refused" if refused else conversation.ending,
            "failed_turn": _failed_turn(played[-1]) if conversation.ending not in ("", "survived") else None,
            "resp": answered[-1]["reply"] if answered else "",
            "asked": len(answered),  # turns answered (not the refused request)
            "prompt_tokens": sum(line["prompt_tokens"] for line in answered),
            "completion_tokens": sum(line["completion_tokens"] for line in answered),
            "cached": sum(bool(line["cached"]) for line in answered),
            "finish_reason": [line["finish_reason"] for line in answered],  # cot: [reasoning, reply]
        }
        for name in ("reasoning_tokens", "cached_tokens"):
            if total := sum(line.get(name, 0) for line in answered):
                record[name] = total
        if refused is not None:
            record.update(refused=refused.kind, error=refused.message)
        return record

    def _turn_fields(self, item: dict[str, Any], turn: Turn) -> dict[str, Any]:
        """Return the turn log fields describing what was asked."""
        question = turn.question or {}
        return {
            "Key": item["Key"],
            **({"draw": draw_of(item)} if draw_of(item) else {}),
            "turn": turn.index,
            "kind": turn.kind,
            "message": turn.message,
            "word": turn.word,
            "adversarial": turn.adversarial,
            "source": question.get("source", ""),
            "question_id": question.get("id", ""),
            "gold": turn.gold,
            **({"wrong_gold": question["wrong_gold"]} if question.get("wrong_gold") else {}),
        }

    def close(self) -> None:
        """Close the turn log (every conversation's lines were flushed when written)."""
        with self._lock:
            if self._handle is not None:
                self._handle.close()
                self._handle = None

    def __enter__(self) -> "ConversationRunner":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _write_turns(self, lines: list[dict[str, Any]]) -> None:
        """Append ``lines`` to the turn log in one flushed write (contiguous per conversation).
        The log stays open between conversations: opening it for each cost a directory check,
        an open and a close, each a wait for the interpreter lock among the busy workers."""
        text = "".join(dumps(line) + "\n" for line in lines)
        with self._lock:
            if self._handle is None:
                self._handle = self._open_log()
            self._handle.write(text)
            self._handle.flush()

    def _open_log(self) -> TextIO:
        """Return the turn log open for appending, a torn last line left by a killed run cut first
        (the run holds the results file's lock: no other writer is at work)."""
        self.turns_path.parent.mkdir(parents=True, exist_ok=True)
        if cut := cut_torn_tail(self.turns_path):
            log.warning("%s: cut a torn last line (%d bytes) left by a killed run", self.turns_path, cut)
        return open(self.turns_path, "a", encoding="utf-8")


def _reply_fields(asked: Asked, outcome: Outcome) -> dict[str, Any]:
    """Return the turn log fields of a reply (with the turn's written reasoning, ``cot``, or the
    uncut completion, ``raw`` of hhh, when there is one; a reasoning model's own thinking in
    ``reasoning``) and how it was judged. ``finish_reason`` is the reply's, with cot the
    reasoning's and the reply's (either may be cut at the token limit)."""
    reply = asked.reply
    extra = {name: getattr(asked, name) for name in ("cot", "raw") if getattr(asked, name) is not None}
    return {
        "reply": reply.text,
        **extra,
        "answer": outcome.answer,
        "correct": outcome.correct,
        "violation": outcome.violation,
        "cached": reply.cached,
        "prompt_tokens": reply.prompt_tokens,
        "completion_tokens": reply.completion_tokens,
        "finish_reason": asked.finish_reasons or reply.finish_reason,
        **reasoning_fields([reply]),
    }


def _failed_turn(line: dict[str, Any]) -> dict[str, Any]:
    """Return the essentials of the turn that ended a conversation."""
    return {key: line.get(key) for key in ("turn", "word", "gold", "reply", "answer", "adversarial")}


def read_turns(
    path: str | Path, keys: set[Any] | None = None, all_draws: bool = False
) -> list[dict[str, Any]]:
    """Return the turn log's lines, for each conversation only its last played block (a block
    starts at turn 1: a conversation re-played after a kill or a --retry-errors supersedes its
    earlier turns), and only conversations in ``keys`` when given (those with a results record).
    Only the first play of each conversation (draw 0) unless ``all_draws`` (a model asked
    ``samples: k`` times plays each k times). A torn last line (a killed writer) is ignored."""
    path = Path(path)
    if not path.is_file():
        return []
    blocks: dict[Any, list[dict[str, Any]]] = {}
    with open(path, encoding="utf-8") as handle:
        lines = handle.readlines()
    for lineno, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        try:
            line = json.loads(text)
        except ValueError:
            if lineno == len(lines) and not text.endswith("\n"):
                break
            raise DataError(
                f"{path}:{lineno}: not a JSON turn record; delete the run's files to start over"
            ) from None
        play = record_id(line)
        if line["turn"] == 1 or play not in blocks:
            blocks[play] = []
        blocks[play].append(line)
    return [
        line
        for (key, draw), block in blocks.items()
        if (keys is None or key in keys) and (all_draws or not draw)
        for line in block
    ]

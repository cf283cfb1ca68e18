"""Asking a model Already Said That: play each conversation of a set, log its turns, sum it up.

The set (``generate.load_set``) gives one item per sample (``items``). Each conversation is one
item of the shared runner (``common.models.run_items``, Key = sample id):
``ConversationRunner.answer`` plays its turns in order, sending the whole history every turn
(HTTP models answer through the response cache, so a rerun replays finished turns for free),
writes the conversation's turns to the turn log, and returns the one results record. A request
the server refuses (context too long) ends the conversation as ``refused``: the record keeps
the turns passed and the runner counts it apart. ``estimate`` prices a run before it starts
(``--dry-run``); ``write_summary`` sums one up after.
"""

import json
import math
import threading
from pathlib import Path
from typing import Any

from common import paths
from common.already_said_that import analysis
from common.already_said_that.generate import SetData
from common.already_said_that.prompts import Conversation, Outcome, Turn, task_description
from common.errors import DataError
from common.jsonl import dumps, write_json
from common.models.base import Message, Model, Reply, RequestRefused, reasoning_fields
from common.models.config import cost_usd
from common.results import draw_of, read_results, record_id, results_filename

SUITE = "already_said_that"
RESULTS_DIR = paths.RESULTS / SUITE
PROMPTING = "direct"  # the original's "generation/direct": the reply is the answer, no reasoning asked
CHARS_PER_TOKEN = 4  # the --dry-run estimate (English text; a real tokenizer differs by some 10-30%)


def run_paths(set_name: str, model_name: str, results_root: Path = RESULTS_DIR) -> dict[str, Path]:
    """Return the files of one run: ``results`` (one line per conversation), ``turns`` (the turn
    log), ``summary`` (the run's summary JSON), all in results/already_said_that/<set>/."""
    results = results_root / set_name / results_filename(PROMPTING, model_name)
    stem = results.name.removesuffix("results.jsonl")
    return {
        "results": results,
        "turns": results.with_name(stem + "turns.jsonl"),
        "summary": results.with_name(stem + "summary.json"),
    }


def items(data: SetData, limit: int | None = None) -> list[dict[str, Any]]:
    """Return the runner's items: one per sample (the first ``limit``), Key = sample id."""
    samples = data.samples[:limit] if limit is not None else data.samples
    return [
        {"Key": sample["sample"], "sample": sample["sample"], "words": sample["words"]} for sample in samples
    ]


def turn_item(key: Any, turn: Turn, options: dict[str, list[str]], draw: int = 0) -> dict[str, Any]:
    """Return what a built-in solver may read about a turn: the gold answer, the kind, and the
    answers of the question's source (the random guess's options); and, for a repeated play of
    the conversation, its ``draw`` (which HTTP models read too: each draw is seeded and cached
    apart)."""
    source = turn.question["source"] if turn.question else ""
    return {
        "Key": key,
        **({"draw": draw} if draw else {}),
        "turn": turn.index,
        "kind": turn.kind,
        "gold": turn.gold,
        "options": options.get(source, []),
    }


class ConversationRunner:
    """Plays conversations of one set for the shared runner, appending their turns to a log."""

    def __init__(self, data: SetData, turns_path: Path, model_name: str):
        self.data = data
        self.model_name = model_name
        self.system = task_description(data.example if data.has_distractors else None)
        self.turns_path = Path(turns_path)
        self._lock = threading.Lock()

    def answer(self, model: Model, item: dict[str, Any]) -> dict[str, Any]:
        """Play the conversation of ``item`` to its end and return its results record.

        Its turn lines are appended to the turn log in one write before the record is returned
        (the runner then writes the record), so a conversation's turns are contiguous and a
        re-played conversation's later block supersedes an earlier one (``read_turns``).
        """
        conversation = self.data.conversation(item)
        messages: list[Message] = [{"role": "system", "content": self.system}]
        log: list[dict[str, Any]] = []
        refused = None
        while not conversation.over:
            turn = conversation.next_turn()
            messages.append({"role": "user", "content": turn.message})
            try:
                reply = model.complete(
                    messages, turn_item(item["Key"], turn, self.data.options, draw_of(item))
                )
            except RequestRefused as exc:
                refused = exc
                log.append({**self._turn_fields(item, turn), "refused": exc.kind, "error": exc.message})
                break
            messages.append({"role": "assistant", "content": reply.text})
            log.append(
                {**self._turn_fields(item, turn), **_reply_fields(reply, conversation.judge(reply.text))}
            )
        self._write_turns(log)
        return self._record(item, conversation, log, refused)

    def _record(
        self,
        item: dict[str, Any],
        conversation: Conversation,
        log: list[dict[str, Any]],
        refused: RequestRefused | None,
    ) -> dict[str, Any]:
        """Return the results record of a conversation played to its end (``log``: its turn lines)."""
        answered = [line for line in log if "refused" not in line]
        distractor_turns = [line for line in answered if line["kind"] == "distractor"]
        correct = sum(line["correct"] for line in distractor_turns)
        record = {
            "Key": item["Key"],
            "sample": item["sample"],
            "set": self.data.name,
            "variant": self.data.config.get("variant"),
            "model": self.model_name,
            "turns": conversation.turns_done,
            "distractors": conversation.distractors_done,
            "distractors_correct": correct,
            "distractor_accuracy": correct / len(distractor_turns) if distractor_turns else None,
            "violations": sum(line.get("violation", False) for line in log),
            "ended": "refused" if refused else conversation.ending,
            "failed_turn": _failed_turn(log[-1]) if conversation.ending not in ("", "survived") else None,
            "resp": answered[-1]["reply"] if answered else "",
            "asked": len(answered),  # turns answered (not the refused request)
            "prompt_tokens": sum(line["prompt_tokens"] for line in answered),
            "completion_tokens": sum(line["completion_tokens"] for line in answered),
            "cached": sum(bool(line["cached"]) for line in answered),
            "finish_reason": [line["finish_reason"] for line in answered],
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
        }

    def _write_turns(self, lines: list[dict[str, Any]]) -> None:
        """Append ``lines`` to the turn log in one flushed write (contiguous per conversation)."""
        text = "".join(dumps(line) + "\n" for line in lines)
        with self._lock:
            self.turns_path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.turns_path, "a", encoding="utf-8") as handle:
                handle.write(text)


def _reply_fields(reply: Reply, outcome: Outcome) -> dict[str, Any]:
    """Return the turn log fields of a reply and how it was judged."""
    return {
        "reply": reply.text,
        "answer": outcome.answer,
        "correct": outcome.correct,
        "violation": outcome.violation,
        "cached": reply.cached,
        "prompt_tokens": reply.prompt_tokens,
        "completion_tokens": reply.completion_tokens,
        "finish_reason": reply.finish_reason,
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


def estimate(data: SetData, limit: int | None = None) -> dict[str, Any]:
    """Return the cost of a run if every conversation lasted all its turns (the most it can cost):
    ``conversations``, ``requests``, ``input_tokens`` and ``output_tokens`` (characters / 4 of
    the exact messages, played with the oracle's replies), and ``turns`` of the longest. Input
    grows with the square of the length: turn t sends the system message and all 2t - 1 messages
    before it."""
    system_chars = len(task_description(data.example if data.has_distractors else None))
    requests = input_chars = output_chars = longest = 0
    for item in items(data, limit):
        conversation = data.conversation(item)
        history = system_chars
        while not conversation.over:
            turn = conversation.next_turn()
            reply = f"[answer: {turn.gold}]"
            history += len(turn.message)
            requests += 1
            input_chars += history
            output_chars += len(reply)
            history += len(reply)
            conversation.judge(reply)
        longest = max(longest, conversation.turns_done)
    return {
        "conversations": len(items(data, limit)),
        "requests": requests,
        "input_tokens": math.ceil(input_chars / CHARS_PER_TOKEN),
        "output_tokens": math.ceil(output_chars / CHARS_PER_TOKEN),
        "turns": longest,  # of the longest conversation: the rounds a batch run takes
    }


def estimate_text(
    data: SetData,
    limit: int | None,
    price: dict[str, float] | None,
    max_tokens: int | None = None,
    batch: bool = False,
) -> str:
    """Return the --dry-run line: what a run of ``data`` may cost at most (``estimate``), in
    dollars too when the model config has a price (at the batch price with ``batch``: one
    batch per turn); with ``max_tokens`` also the bound for a model that spends its whole
    budget on every reply (a thinking model may)."""
    guess = estimate(data, limit)
    cost = cost_usd(price, guess["input_tokens"], guess["output_tokens"], batch=batch)
    at = f" at the batch price ({price.get('batch', 0.5):.0%})" if batch and price else ""
    text = (
        f"{data.name}: {guess['conversations']:,} conversations; at most {guess['requests']:,} requests, "
        f"~{guess['input_tokens']:,} input tokens and ~{guess['output_tokens']:,} output tokens "
        "(characters / 4; the whole history is sent every turn, so input grows with the square of the "
        "length; a conversation that fails early costs far less)"
        + (f"; at most ${cost:,.2f}{at}" if cost is not None else "; no price in the model config")
    )
    if batch:
        text += f"; as batches: one per turn, at most {guess['turns']:,}"
    if max_tokens:
        budget = guess["requests"] * max_tokens
        spent = cost_usd(price, guess["input_tokens"], budget, batch=batch)
        text += (
            f". Replies of max_tokens={max_tokens:,} each (a thinking model's reasoning counts): up to "
            f"{budget:,} output tokens" + (f", ${spent:,.2f}" if spent is not None else "")
        )
    return text


def write_summary(
    files: dict[str, Path],
    data: SetData,
    model_name: str,
    summary: Any,
    price: dict[str, float] | None,
) -> str:
    """Write the run's summary JSON (the metrics of every conversation in the results file, this
    run's status, requests, real token usage and cost when priced, and the tokens the recorded
    conversations took, cached turns included) and return a one-line account of it. Writes nothing
    while no conversation is recorded yet (a batch run waiting for its first batch)."""
    if not files["results"].is_file():
        return f"{data.name} / {model_name}: no conversation recorded yet ({summary.status})"
    records = read_results(files["results"])
    metrics = analysis.seed_metrics(analysis.conversation_frame(records))
    totals = summary.counts
    write_json(
        files["summary"],
        {
            "set": data.name,
            "variant": data.config.get("variant"),
            "model": model_name,
            "results": paths.shown(files["results"]),
            "conversations": len(records),
            "metrics": metrics,
            "this_run": {
                "status": summary.status,
                "conversations_played": summary.answered,
                "refused": summary.refused,
                "failed": summary.failed,
                "elapsed_s": summary.elapsed_s,
                **totals,
                "cost_usd": cost_usd(
                    price, totals["prompt_tokens"], totals["completion_tokens"], totals["cached_tokens"]
                ),
            },
            "tokens_recorded": {
                name: sum(int(r.get(name) or 0) for r in records)
                for name in ("prompt_tokens", "completion_tokens")
            },
        },
    )
    return (
        f"{data.name} / {model_name}: {len(records)} conversations, avg turns "
        f"{metrics['avg_num_turns']:.2f}, refused {metrics['refused']}; summary in "
        f"{paths.shown(files['summary'])}"
    )

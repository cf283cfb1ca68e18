"""What an Already Said That run costs: before it starts, its most expensive cost (``--dry-run``)
and the reply length its gold answers need (the warning about a config's ``max_tokens``); after
it, its summary (``write_summary``: what it played, its real token usage and cost).

Token counts are characters divided by a fixed ratio (no tokenizer is installed): 4 for the cost
estimate (English text; a real tokenizer differs by some 10-30%), 3 for the reply length, on the
safe side for lists of words and commas.
"""

import math
from pathlib import Path
from typing import Any

from common import paths
from common.already_said_that.generate import SetData
from common.already_said_that.prompting import DECODING
from common.already_said_that.prompts import normalise
from common.already_said_that.wording import wording_name, wording_of
from common.jsonl import write_json
from common.models.config import cost_usd
from common.results import parse_results_filename

CHARS_PER_TOKEN = 4  # the --dry-run estimate
REPLY_CHARS_PER_TOKEN = 3  # the reply length a gold answer needs (fewer characters per token: safe side)


def estimate(
    data: SetData,
    limit: int | None = None,
    prompting: str = "direct",
    max_tokens: int = DECODING["max_tokens"],
) -> dict[str, Any]:
    """Return the cost of a run if every conversation lasted all its turns (the most it can cost):
    ``conversations``, ``requests``, ``input_tokens`` and ``output_tokens`` (characters / 4 of
    the exact messages, played with the oracle's replies). Input grows with the square of the
    length: turn t sends the system message and all 2t - 1 messages before it. ``prompting``
    ``cot`` asks twice a turn and reasons for up to ``max_tokens`` (counted in full), ``hhh``
    sends its preamble of example dialogues with every request. The texts are the set's wording."""
    wording = wording_of(data.config, data.example, data.has_distractors)
    system_chars = len(wording.system)
    preamble = len(wording.transcript([])) if prompting == "hhh" else 0
    reasoning = max_tokens * CHARS_PER_TOKEN if prompting == "cot" else 0
    samples = data.limited(limit)
    seeds = int(data.config.get("seeds") or 1)  # the set's protocol: each seed plays its conversations
    played = [(sample, draw) for draw in range(seeds) for sample in samples if data.plays(sample, draw)]
    requests = input_chars = output_chars = longest = 0
    for sample, draw in played:
        conversation = data.conversation(sample, draw)
        history = system_chars + preamble
        while not conversation.over:
            turn = conversation.next_turn()
            reply = f"[answer: {turn.gold}]"
            history += len(turn.message)
            if prompting == "cot":  # reasoning, then the reply with the reasoning in the request
                requests += 2
                input_chars += (
                    2 * (history + len(wording.cot_prompt)) + reasoning + len(wording.extract_prompt)
                )
            else:
                requests += 1
                input_chars += history
            output_chars += len(reply) + reasoning
            history += len(reply)
            conversation.judge(reply)
        longest = max(longest, conversation.turns_done)
    return {
        "conversations": len(played),
        "turns": longest,  # of the longest conversation: the rounds a batch run takes
        "requests": requests,
        "input_tokens": math.ceil(input_chars / CHARS_PER_TOKEN),
        "output_tokens": math.ceil(output_chars / CHARS_PER_TOKEN),
    }


def estimate_text(
    data: SetData,
    limit: int | None,
    price: dict[str, float] | None,
    prompting: str = "direct",
    max_tokens: int = DECODING["max_tokens"],
    batch: bool = False,
) -> str:
    """Return the --dry-run line: what a run of ``data`` may cost at most (``estimate``), in
    dollars too when the model config has a price (at the batch price with ``batch``: one batch
    per turn); and the bound for a model that spends its whole ``max_tokens`` on every reply (a
    thinking model may: its reasoning counts)."""
    guess = estimate(data, limit, prompting, max_tokens)
    money = cost_usd(price, guess["input_tokens"], guess["output_tokens"], batch=batch)
    at = f" at the batch price ({price.get('batch', 0.5):.0%})" if batch and price else ""
    budget = guess["requests"] * max_tokens
    spent = cost_usd(price, guess["input_tokens"], budget, batch=batch)
    return (
        f"{data.name} ({prompting}): {guess['conversations']:,} conversations; at most "
        f"{guess['requests']:,} requests, ~{guess['input_tokens']:,} input tokens and "
        f"~{guess['output_tokens']:,} output tokens (characters / 4; the whole history is sent every "
        "turn, so input grows with the square of the length; a conversation that fails early costs "
        "far less)"
        + (f"; at most ${money:,.2f}{at}" if money is not None else "; no price in the model config")
        + (f"; as batches: one per turn, at most {guess['turns']:,}" if batch else "")
        + f". Replies of max_tokens={max_tokens:,} each (a thinking model's reasoning counts): up to "
        f"{budget:,} output tokens" + (f", ${spent:,.2f}" if spent is not None else "")
    )


def reply_tokens_needed(data: SetData) -> tuple[int, str]:
    """Return ``(tokens, reply)``: the longest correct reply of the set (``[answer: <gold>]`` of
    every distractor question, and of yes/no) and the tokens it needs (characters / 3, rounded up)."""
    golds = ["yes", *(normalise(str(record["answer"])) for record in data.pool)]
    reply = max((f"[answer: {gold}]" for gold in golds), key=len)
    return math.ceil(len(reply) / REPLY_CHARS_PER_TOKEN), reply


def max_tokens_warning(data: SetData, max_tokens: int | None) -> str | None:
    """Return a warning when ``max_tokens`` (a model config's) is below what the set's longest
    correct reply needs (``reply_tokens_needed``), else None: such replies are cut and judged
    wrong."""
    needed, reply = reply_tokens_needed(data)
    if max_tokens is None or max_tokens >= needed:
        return None
    return (
        f"max_tokens {max_tokens} is below what the longest correct reply of {data.name} needs "
        f"(~{needed} tokens for {reply!r}, {len(reply)} characters): replies cut short are judged "
        f"wrong. Raise it, e.g. --set max_tokens={DECODING['max_tokens']} (the original's)"
    )


def write_summary(
    files: dict[str, Path],
    data: SetData,
    model_name: str,
    summary: Any,
    price: dict[str, float] | None,
) -> str:
    """Write the run's summary JSON (this run's status, conversations played, requests, real token
    usage and cost when priced) and return a one-line account of it that names the analysis to run
    for the metrics: the results file is not read again here (the scoring stage reads it, once).
    Writes nothing while no conversation is recorded yet (a batch run waiting for its first batch)."""
    if not files["results"].is_file():
        return f"{data.name} / {model_name}: no conversation recorded yet ({summary.status})"
    totals = summary.counts
    write_json(
        files["summary"],
        {
            "set": data.name,
            "variant": data.config.get("variant"),
            "wording": wording_name(data.config),
            "model": model_name,
            "prompting": parse_results_filename(files["results"])[0],
            "results": paths.shown(files["results"]),
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
        },
    )
    return (
        f"{data.name} / {model_name}: {summary.answered} conversations played, {summary.refused} refused "
        f"({summary.status}); summary in {paths.shown(files['summary'])}; the metrics: "
        f"scripts/analyse_results.py -t already_said_that/{data.name}"
    )

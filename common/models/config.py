"""Model settings: one dataclass with commented defaults, loaded strictly from ``configs/models/*.yaml``.

Defaults live here; a config file holds only what differs (``base_url``, ``model``, maybe
``api_key_env``). The key itself is never stored: ``api_key_env`` names the environment
variable holding it, and ``api_key`` reads it at request time.

A suite may have decoding defaults of its own (a script passes them as ``defaults``), and a
config file may decode differently for one suite: its ``suites`` mapping holds, per suite name,
decoding settings (``SUITE_SETTINGS``) that win over the file's own when that suite loads it
(e.g. ``suites: {already_said_that: {max_tokens: 512}}`` beside ``max_tokens: 16``). The order:
the dataclass defaults, the suite's defaults, the file, its section for the suite, ``--set``.
"""

import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from common.config import Source, apply_overrides, build, load_yaml
from common.errors import ConfigError
from common.pricing import cost_usd as cost_usd  # the price of a run's tokens (the score stage counts it too)
from common.results import LabelError, check_label


@dataclass
class Price:
    """Dollars per 1,000 tokens, for the cost line of the run metadata."""

    input: float = 0.0  # prompt tokens
    output: float = 0.0  # completion tokens (reasoning tokens are completion tokens, billed as output)
    cached_input: float | None = None  # prompt tokens the server read from its prompt cache; None: as input
    batch: float = 0.5  # share of these prices a batch request costs (OpenAI's Batch API: half)


@dataclass
class ModelConfig:
    """How to reach one model over the OpenAI-compatible HTTP API, and how hard to try."""

    name: str = ""  # label in results file names; defaults to the config file's stem
    # everything before /chat/completions; a list of replicas shares the requests (the first names
    # the model in the cache and the batch files)
    base_url: str | list[str] = "http://127.0.0.1:8000/v1"
    model: str = ""  # the server's model id (required)
    api: Literal["chat", "completions"] = "chat"  # /chat/completions (messages) or /completions (prompt)
    api_key_env: str | None = None  # NAME of the environment variable with the key; None: no key sent
    # decoding (None: not sent, the server's default applies)
    temperature: float | None = 0.0  # reasoning models (OpenAI o-series, GPT-5) take only null
    max_tokens: int | None = 256  # the token budget of one reply, reasoning included
    token_limit_param: Literal["max_tokens", "max_completion_tokens"] = "max_tokens"  # the name it is sent as
    stop: list[str] | None = None
    seed: int | None = 0
    top_p: float | None = None
    samples: int = 1  # answers asked per item, each its own request (seed + draw): 1 is one answer
    reasoning_effort: str | None = None  # e.g. low / medium / high, for servers that take it
    extra_body: dict[str, Any] | None = None  # more request fields, sent as given (they win over the above)
    # the promptings a script asks this model in when its --prompting is not given (one results file
    # each; usually set per suite in `suites`, e.g. {already_said_that: {promptings: [direct, cot]}});
    # None: the script's default
    promptings: list[str] | None = None
    # pictures (image sets, docs/models.md "Vision models")
    vision: bool = (
        False  # whether the model takes pictures; false: a set with pictures is refused before any request
    )
    image_detail: Literal["auto", "low", "high"] | None = (
        None  # sent with every picture; None: not sent (auto)
    )
    image_tokens: int | None = (
        None  # tokens one picture costs, for --dry-run; None: OpenAI's rule, else 28-px patches
    )
    # throughput and robustness
    concurrency: int = 4  # most requests in flight (worker threads); fewer while the server answers 429
    timeout_s: list[float] = field(default_factory=lambda: [10.0, 120.0])  # (connect, read) per request
    max_retries: int = 5  # retries of one request (connection error, timeout, 5xx, bad JSON; 429s apart)
    retry_budget: int = 1000  # retries the whole run may spend; when used up the run stops (0: never retry)
    backoff_s: float = 1.0  # first backoff; doubles each retry, full jitter
    backoff_max_s: float = 60.0  # cap of one backoff (a server's Retry-After is obeyed as given)
    price_per_1k_tokens: Price | None = None  # for the cost in the run metadata
    batch_poll_s: float = 30.0  # batch mode with --wait: seconds between two looks at the batch
    # an engine the run starts itself on 127.0.0.1 and stops at its end (common/models/engine.py):
    # None, a server already listening at base_url; llama.cpp (this machine's CPU) or vllm (a GPU)
    engine: Literal["llama.cpp", "vllm"] | None = None
    gguf: str | None = None  # llama.cpp: the GGUF file (a path), or the installed package holding it
    context: int = 8192  # the engine's context window, in tokens (prompt and reply)
    parallel: int = 1  # the engine's slots: llama.cpp servers (a conversation keeps its own), vLLM sequences
    threads: int = 1  # llama.cpp: CPU threads of each slot
    chat_format: str | None = None  # llama.cpp: e.g. chatml; None: the template the GGUF holds
    engine_args: list[str] = field(default_factory=list)  # more options of the engine, as given

    def check(self, source: Source | None = None, overridden: set[str] | None = None) -> None:
        """Raise ConfigError naming the field (and file:line, or the command line for ``overridden``
        fields) if a value is out of range; changes nothing."""
        source = source or Source()
        overridden = overridden or set()
        problems = {
            "model": not self.model and "the server's model id is required",
            "base_url": _bad_urls(self.base_url),
            "concurrency": self.concurrency < 1 and "must be at least 1",
            "timeout_s": (len(self.timeout_s) != 2 or min(self.timeout_s) <= 0)
            and "must be [connect, read], two positive numbers of seconds",
            "max_retries": self.max_retries < 0 and "must be 0 or more",
            "retry_budget": self.retry_budget < 0 and "must be 0 or more",
            "max_tokens": self.max_tokens is not None and self.max_tokens < 1 and "must be at least 1",
            "samples": self.samples < 1 and "must be at least 1",
            "batch_poll_s": self.batch_poll_s <= 0 and "must be a positive number of seconds",
            "image_tokens": self.image_tokens is not None and self.image_tokens < 0 and "must be 0 or more",
            "gguf": self.engine == "llama.cpp"
            and not self.gguf
            and "is needed by engine: llama.cpp (a .gguf path, or the package that holds it)",
            "context": self.context < 1 and "must be at least 1",
            "parallel": self.parallel < 1 and "must be at least 1",
            "threads": self.threads < 1 and "must be at least 1",
        }
        for name, problem in problems.items():
            if problem:
                where = "<command line>" if name in overridden else source.where(name)
                raise ConfigError(f"{where}: field '{name}' {problem} (got {getattr(self, name)!r})")

    def api_key(self) -> str | None:
        """Return the key from the environment variable ``api_key_env`` names (None if no key is used).

        Raises ConfigError naming the variable (never a value) when it is unset or empty.
        """
        if not self.api_key_env:
            return None
        key = os.environ.get(self.api_key_env, "")
        if not key:
            raise ConfigError(
                f"the model config reads its API key from the environment variable "
                f"{self.api_key_env}, which is not set: export {self.api_key_env}=..."
            )
        return key

    def settings(self) -> dict[str, Any]:
        """Return every setting as plain data, for run metadata (holds the variable's name, never a key)."""
        return dataclasses.asdict(self)


def _bad_urls(base_url: str | list[str]) -> str | bool:
    """Return what is wrong with ``base_url`` (one URL or a list of them), or False."""
    urls = [base_url] if isinstance(base_url, str) else base_url
    if not urls:
        return "must be a URL or a list of URLs, not an empty list"
    bad = [url for url in urls if not url.startswith(("http://", "https://"))]
    if bad:
        return f"must start with http(s)://{' (every URL of the list)' if len(urls) > 1 else ''}"
    return len(set(urls)) < len(urls) and "lists a URL twice"


# the settings a config's `suites` section may give one suite (decoding and how it is asked, never
# what names or reaches the model)
SUITE_SETTINGS = (
    "temperature",
    "max_tokens",
    "stop",
    "seed",
    "top_p",
    "reasoning_effort",
    "extra_body",
    "promptings",
)


def load_model_config(
    path: str | Path,
    overrides: dict[str, Any] | None = None,
    defaults: dict[str, Any] | None = None,
    suite: str | None = None,
) -> ModelConfig:
    """Return the ModelConfig of a YAML file, with ``overrides`` applied; ``name`` defaults to the stem.

    ``defaults`` (a suite's, e.g. its decoding settings) replace the dataclass defaults: the
    file's own settings, then its ``suites`` section for ``suite`` (when given), then
    ``overrides``, win over them. Unknown keys, wrong types and out-of-range values raise
    ConfigError naming file:line: field (every suite's section is checked, whichever loads it).
    """
    path = Path(path)
    data, source = load_yaml(path)
    if data is not None and not isinstance(data, dict):
        raise ConfigError(f"{path}: a model config is a mapping of settings, got {type(data).__name__}")
    data = dict(data or {})
    sections = _suite_sections(data.pop("suites", None), source)
    own = sections.get(suite, {}) if suite else {}
    lines = {**source.lines, **{key: source.lines.get(f"suites.{suite}.{key}", 0) for key in own}}
    merged = {"name": path.stem, **(defaults or {}), **data, **own}
    return _build_checked(merged, Source(source.path, lines), overrides or {})


def _suite_sections(sections: Any, source: Source) -> dict[str, dict[str, Any]]:
    """Return a config's ``suites`` mapping (suite name -> settings), each section checked: only
    ``SUITE_SETTINGS``, of the right types (ConfigError naming file:line otherwise)."""
    if sections is None:
        return {}
    if not isinstance(sections, dict) or not all(isinstance(v, dict) for v in sections.values()):
        raise ConfigError(
            f"{source.where('suites')}: field 'suites': a mapping of suite names to settings, "
            "e.g. suites: {<suite>: {max_tokens: 512}}"
        )
    for suite, settings in sections.items():
        for key in settings:
            if key not in SUITE_SETTINGS:
                raise ConfigError(
                    f"{source.where(f'suites.{suite}.{key}')}: field 'suites.{suite}.{key}': a suite's "
                    f"section takes decoding settings and promptings only ({', '.join(SUITE_SETTINGS)})"
                )
        build(ModelConfig, settings, source, prefix=f"suites.{suite}.")  # types, named by line
    return sections


def config_from_mapping(data: dict[str, Any], overrides: dict[str, Any] | None = None) -> ModelConfig:
    """Return a ModelConfig from a plain mapping (e.g. in tests), checked like a file."""
    return _build_checked(dict(data), Source("<settings>"), overrides or {})


def _build_checked(data: dict[str, Any], source: Source, overrides: dict[str, Any]) -> ModelConfig:
    """Return the checked config of ``data`` plus ``overrides``; errors name file:line or the command line."""
    config = build(ModelConfig, data, source)
    if overrides:
        config = apply_overrides(config, overrides)
    config.check(source, overridden=set(overrides))
    try:
        check_label(config.name)
    except LabelError as exc:
        raise ConfigError(
            f"{source.where('name')}: field 'name': {exc} (it labels the results file)"
        ) from None
    return config

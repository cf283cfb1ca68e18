"""Model access: built-in baselines and any OpenAI-compatible server behind one interface.

``resolve_model(name_or_config, builtins=<suite>.baselines.BASELINES)`` returns a Model
(``complete(messages, item) -> Reply``); ``run_items`` asks it every item of a set with the
suite's protocol (``common/<suite>/run.py: answer``) and appends the records to a results file.
Modules: config (settings), client (HTTP, retries, timeouts) with payload (a request's body),
vision (which modalities a model is asked in), endpoints (several replicas),
limiter (the concurrency that adapts to 429s), cache (SQLite), independence (a sampled reply
belongs to its item: two items never share one), builtin (the base of every
suite's built-in models), resolve (names and configs to models), runner (resume) with pool
(the worker threads), summary and metadata (what a run did), batch with batch_api and
batch_files (batch mode), images (pictures as OpenAI content parts, their token cost), estimate
(``--dry-run``), stub_server with stub_replies and stub_batch (a local OpenAI-compatible server
for tests and benchmarks).
"""

from common.models.base import Counters, Model, ModelError, Reply, RequestFailed
from common.models.builtin import BuiltinModel, baseline_names
from common.models.config import ModelConfig, load_model_config
from common.models.resolve import models_of, resolve_model
from common.models.runner import run_items
from common.models.summary import RunSummary, exit_code
from common.results import metadata_path

__all__ = [
    "BuiltinModel",
    "Counters",
    "Model",
    "ModelConfig",
    "ModelError",
    "Reply",
    "RequestFailed",
    "RunSummary",
    "baseline_names",
    "exit_code",
    "load_model_config",
    "metadata_path",
    "models_of",
    "resolve_model",
    "run_items",
]

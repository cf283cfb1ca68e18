"""Model access: built-in baselines and any OpenAI-compatible server behind one interface.

``resolve_model(name_or_config)`` returns a Model (``complete(messages, item) -> Reply``);
``run_items`` asks it every item of a set, by default with the WorldSense answering protocol
(a suite passes its own, as the blocks scripts do), and appends the records to a results file.
Modules: config (settings), client (HTTP, retries, timeouts), cache (SQLite), builtin (registry
of offline models), answering (protocol), runner (thread pool, resume, metadata), stub_server
(a local OpenAI-compatible server for tests and benchmarks).
"""

from common.models.base import Counters, Model, ModelError, Reply, RequestFailed
from common.models.builtin import BUILTINS, register_builtin
from common.models.config import ModelConfig, load_model_config
from common.models.resolve import resolve_model
from common.models.runner import RunSummary, metadata_path, run_items

__all__ = [
    "BUILTINS",
    "Counters",
    "Model",
    "ModelConfig",
    "ModelError",
    "Reply",
    "RequestFailed",
    "RunSummary",
    "load_model_config",
    "metadata_path",
    "register_builtin",
    "resolve_model",
    "run_items",
]

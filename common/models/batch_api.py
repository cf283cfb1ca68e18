"""The Batch API of an OpenAI-compatible server: upload a JSONL of requests, create a batch, look
at it, download its output and error files (OpenAI's ``/files`` and ``/batches`` routes; the
stub server has them too, vLLM's server does not).

``BatchAPI`` speaks for one model (its first endpoint, its key: sent in the Authorization header
only, masked out of every message). Every failure raises ModelError with the server's message:
the batch state on disk is untouched, so the same command can be run again.
"""

import logging
from pathlib import Path
from typing import Any

import requests

from common.models.base import ModelError
from common.models.responses import failure_reason, server_message

log = logging.getLogger(__name__)

TRANSFER_TIMEOUT_S = (10.0, 600.0)  # (connect, read) of an upload or a download (files of many MB)
LOOK_TIMEOUT_S = (10.0, 60.0)
COMPLETION_WINDOW = "24h"  # the only window OpenAI offers
FINAL = ("completed", "failed", "expired", "cancelled")  # a batch in one of these moves no more
LOOKS_FAILED = 10  # looks at a batch that may fail in a row while waiting before the run stops


class BatchAPI:
    """The files and batches routes at a model's first ``base_url``."""

    def __init__(self, model: Any):
        self.base = model.endpoints.canonical.base_url
        self.model = model
        self._looks_failed = 0

    def __repr__(self) -> str:
        return f"<BatchAPI {self.base}>"

    def available(self) -> bool:
        """Return whether the server has the Batch API (``GET /batches`` answers 200); False when it
        answers 404/405 or nothing listens (then the input file is for an offline engine).
        Raises ModelError when it rejects the key."""
        try:
            response = self._session().get(
                f"{self.base}/batches", params={"limit": 1}, timeout=LOOK_TIMEOUT_S
            )
        except requests.RequestException as exc:
            log.info("no server answers at %s (%s): the batch is for an offline engine", self.base, exc)
            return False
        if response.status_code in (401, 403):
            raise ModelError(
                f"{self.base}/batches: the server rejects the API key: {self._message(response)}"
            )
        return response.ok

    def upload(self, path: Path) -> str:
        """Upload the batch input file ``path`` (purpose ``batch``); return its file id."""
        with open(path, "rb") as handle:
            files = {"file": (path.name, handle, "application/jsonl")}
            response = self._call("post", "/files", data={"purpose": "batch"}, files=files)
        return response.json()["id"]

    def create(self, input_file_id: str, route: str, metadata: dict[str, str]) -> dict[str, Any]:
        """Create the batch of an uploaded input file for ``route`` (e.g. /v1/chat/completions)."""
        body = {
            "input_file_id": input_file_id,
            "endpoint": route,
            "completion_window": COMPLETION_WINDOW,
            "metadata": metadata,
        }
        return self._call("post", "/batches", json=body).json()

    def find(self, input_file_id: str) -> dict[str, Any] | None:
        """Return the batch already made of ``input_file_id`` (one created by a run killed before it
        could write the batch id down), or None."""
        listed = self._call("get", "/batches", params={"limit": 100}).json().get("data") or []
        return next((batch for batch in listed if batch.get("input_file_id") == input_file_id), None)

    def look(self, batch_id: str) -> dict[str, Any]:
        """Return the batch object: ``status``, ``request_counts``, ``output_file_id``, ``error_file_id``."""
        return self._call("get", f"/batches/{batch_id}").json()

    def look_patiently(self, batch_id: str, last: dict[str, Any]) -> dict[str, Any]:
        """Return the batch looked at once more while waiting; a look that fails is logged and
        ``last`` returned (a day's wait survives a network blip); LOOKS_FAILED failures in a row
        raise the ModelError (the same command picks the batch up again)."""
        try:
            batch = self.look(batch_id)
        except ModelError as exc:
            self._looks_failed += 1
            if self._looks_failed >= LOOKS_FAILED:
                raise
            log.warning("%s (look %d of %d that failed in a row)", exc, self._looks_failed, LOOKS_FAILED)
            return last
        self._looks_failed = 0
        return batch

    def content(self, file_id: str) -> str:
        """Return the text of a file (a batch's output or error file)."""
        return self._call("get", f"/files/{file_id}/content", timeout=TRANSFER_TIMEOUT_S).content.decode(
            "utf-8"
        )

    def _call(self, method: str, route: str, **kwargs: Any) -> requests.Response:
        """Return the answer of one call to the Batch API; raise ModelError unless it is 2xx."""
        kwargs.setdefault("timeout", TRANSFER_TIMEOUT_S if "files" in kwargs else LOOK_TIMEOUT_S)
        url = self.base + route
        try:
            response = getattr(self._session(), method)(url, **kwargs)
        except requests.RequestException as exc:
            reason = failure_reason(exc, self.model.api_key)
            raise ModelError(
                f"{url}: the batch API did not answer ({reason}); run the same command again"
            ) from None
        if not response.ok:
            raise ModelError(f"{url}: HTTP {response.status_code}: {self._message(response)}")
        return response

    def _session(self) -> requests.Session:
        """Return the model's Session of this thread (the key in its Authorization header)."""
        return self.model.session()

    def _message(self, response: requests.Response) -> str:
        """Return the server's error message, the key masked."""
        return server_message(response, self.model.api_key)


def requests_done(batch: dict[str, Any]) -> int:
    """Return how many requests of a batch are done (completed or failed)."""
    counts = batch.get("request_counts") or {}
    return int(counts.get("completed") or 0) + int(counts.get("failed") or 0)

"""The stub server's Batch API (OpenAI's files and batches endpoints), for tests and benchmarks.

``POST /files`` (multipart, ``purpose=batch``) stores a JSONL of requests; ``POST /batches``
(``input_file_id``, ``endpoint``, ``completion_window``, ``metadata``) creates a batch in
``validating``; each ``GET /batches/<id>`` moves it on: ``in_progress`` for ``polls`` looks, then
its ``outcome``: ``completed`` (every line answered, by the same answer function as the live
routes), ``expired`` (the first half answered, the rest in the error file as ``batch_expired``)
or ``failed`` (validation failed: no output at all). ``fail_every`` k > 0 makes every k-th line
fail with a 500 in the error file (a partial failure). Both concern the first ``bad_batches``
batches (default: all); later ones complete. ``GET /batches`` lists the batches,
``GET /files/<id>/content`` gives a file. A line's answer is what the live route would answer
(``respond``), so a batch run and a live run against the same stub give the same replies.
"""

import email.parser
import email.policy
import json
import threading
import time
from collections.abc import Callable
from typing import Any

BATCH_OUTCOMES = ("completed", "expired", "failed")
Responder = Callable[[dict[str, Any], str], tuple[int, dict[str, Any]]]  # (body, route) -> (status, json)


class BatchStore:
    """Files and batches of one stub server; every method returns ``(status, json or bytes)``."""

    def __init__(
        self, polls: int = 0, outcome: str = "completed", fail_every: int = 0, bad_batches: int = 10**9
    ):
        if outcome not in BATCH_OUTCOMES:
            raise ValueError(f"outcome must be one of {', '.join(BATCH_OUTCOMES)}, got {outcome!r}")
        self.polls, self.outcome, self.fail_every = polls, outcome, fail_every
        self.bad_batches = bad_batches  # batches that get ``outcome`` and ``fail_every``; later ones complete
        self.files: dict[str, dict[str, Any]] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.lines_answered = 0  # request lines the batches answered (200 or not)
        self._looks: dict[str, int] = {}
        self._lock = threading.Lock()

    def upload(self, content_type: str, raw: bytes) -> tuple[int, dict[str, Any]]:
        """Store the ``file`` part of a multipart upload; return its file object."""
        parts = _multipart(content_type, raw)
        if "file" not in parts or parts.get("purpose", (b"", ""))[0] != b"batch":
            return 400, _error("a batch upload needs purpose=batch and a file part")
        data, filename = parts["file"]
        return 200, self._store(data, filename, "batch")

    def create(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """Create a batch of the uploaded ``input_file_id`` (status ``validating``)."""
        if body.get("input_file_id") not in self.files:
            return 404, _error(f"no file {body.get('input_file_id')!r}")
        with self._lock:
            batch_id = f"batch_{len(self.batches) + 1}"
            lines = self.files[body["input_file_id"]]["data"].decode("utf-8").splitlines()
            batch = {
                "id": batch_id,
                "object": "batch",
                "endpoint": body.get("endpoint"),
                "input_file_id": body["input_file_id"],
                "completion_window": body.get("completion_window", "24h"),
                "status": "validating",
                "output_file_id": None,
                "error_file_id": None,
                "created_at": int(time.time()),
                "metadata": body.get("metadata") or {},
                "request_counts": {
                    "total": sum(1 for line in lines if line.strip()),
                    "completed": 0,
                    "failed": 0,
                },
                "errors": None,
            }
            self.batches[batch_id] = batch
            self._looks[batch_id] = 0
        return 200, dict(batch)

    def look(self, batch_id: str, respond: Responder) -> tuple[int, dict[str, Any]]:
        """Return the batch, moved one step on (validating, in_progress ``polls`` times, then its outcome)."""
        with self._lock:
            batch = self.batches.get(batch_id)
            if batch is None:
                return 404, _error(f"no batch {batch_id!r}")
            if batch["status"] == "validating":
                batch["status"] = "in_progress"
            elif batch["status"] == "in_progress":
                self._looks[batch_id] += 1
                if self._looks[batch_id] > self.polls:
                    self._finish(batch, respond)
            return 200, dict(batch)

    def looks(self, batch_id: str) -> int:
        """Return how many times ``batch_id`` was looked at while in progress (0 if unknown): a
        test knows from it that a client is polling."""
        with self._lock:
            return self._looks.get(batch_id, 0)

    def listing(self) -> tuple[int, dict[str, Any]]:
        """Return every batch, newest first, as OpenAI's list object."""
        with self._lock:
            data = [dict(batch) for batch in reversed(self.batches.values())]
        return 200, {"object": "list", "data": data, "has_more": False}

    def content(self, file_id: str) -> tuple[int, bytes]:
        """Return the bytes of a stored file."""
        stored = self.files.get(file_id)
        return (200, stored["data"]) if stored else (404, json.dumps(_error(f"no file {file_id!r}")).encode())

    def _store(self, data: bytes, filename: str, purpose: str) -> dict[str, Any]:
        """Keep a file; return its file object."""
        file_id = f"file-{len(self.files) + 1}"
        self.files[file_id] = {"data": data, "filename": filename, "purpose": purpose}
        return {"id": file_id, "object": "file", "bytes": len(data), "filename": filename, "purpose": purpose}

    def _finish(self, batch: dict[str, Any], respond: Responder) -> None:
        """Answer the batch's lines and give it its outcome, its output and error files (lock held)."""
        bad = int(batch["id"].split("_")[1]) <= self.bad_batches
        outcome, fail_every = (self.outcome, self.fail_every) if bad else ("completed", 0)
        batch["status"] = outcome
        if outcome == "failed":
            batch["errors"] = {
                "object": "list",
                "data": [{"code": "invalid_request", "message": "stub: failed"}],
            }
            return
        requests = [
            json.loads(line) for line in self.files[batch["input_file_id"]]["data"].splitlines() if line
        ]
        answered = len(requests) // 2 if outcome == "expired" else len(requests)
        output, errors = [], []
        for number, request in enumerate(requests, start=1):
            line = {"id": f"req_{number}", "custom_id": request["custom_id"]}
            if number > answered:
                message = "This request could not be executed before the completion window expired."
                errors.append(
                    {**line, "response": None, "error": {"code": "batch_expired", "message": message}}
                )
                continue
            if fail_every and number % fail_every == 0:
                status, payload = 500, _error("stub: internal error")
            else:
                status, payload = respond(request["body"], request["url"])
                self.lines_answered += 1
            answer = {**line, "response": {"status_code": status, "request_id": line["id"], "body": payload}}
            (output if status == 200 else errors).append({**answer, "error": None})
        counts = batch["request_counts"]
        counts["completed"], counts["failed"] = len(output), len(errors)
        for name, lines in (("output_file_id", output), ("error_file_id", errors)):
            if lines:
                text = "".join(json.dumps(line) + "\n" for line in lines).encode()
                batch[name] = self._store(text, f"{batch['id']}_{name}.jsonl", "batch_output")["id"]


def _multipart(content_type: str, raw: bytes) -> dict[str, tuple[bytes, str]]:
    """Return the parts of a multipart/form-data body: name -> (bytes, filename)."""
    head = b"Content-Type: " + content_type.encode() + b"\r\n\r\n"
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + raw)
    parts = {}
    for part in message.iter_parts() if message.is_multipart() else []:
        name = part.get_param("name", header="content-disposition")
        if name:
            parts[name] = (part.get_payload(decode=True) or b"", part.get_filename() or "")
    return parts


def _error(message: str) -> dict[str, Any]:
    """Return an OpenAI-style error body."""
    return {"error": {"message": message, "type": "invalid_request_error"}}

"""Fixtures for the model-access tests: a real OpenAI-compatible server on 127.0.0.1."""

from collections.abc import Iterator

import pytest

from common.models.stub_server import StubServer


@pytest.fixture
def server() -> Iterator[StubServer]:
    """A stub server answering "TRUE" to everything unless scripted otherwise."""
    with StubServer() as stub:
        yield stub

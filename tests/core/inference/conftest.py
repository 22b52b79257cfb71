"""Fixtures of the inference tests: local OpenAI-compatible servers started on demand."""

import pytest

from tests.openai_server import OpenAIServer


@pytest.fixture
def serve():
    """Start test servers on demand; all are stopped after the test."""
    started = []

    def start(**options) -> OpenAIServer:
        started.append(OpenAIServer(**options).start())
        return started[-1]

    yield start
    for server in started:
        server.stop()

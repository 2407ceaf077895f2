"""A turn runner that answers from a list, for the tests of what puts its own questions to a
model (a judge's votes, a mocked server's replies)."""

from __future__ import annotations

from skilltest.runners.base import TurnRequest
from skilltest.transcript import Transcript, Usage


class ListedAnswers:
    """Answers each turn with the next of ``answers`` (``None``: the model API failed), each
    answer counting ``usage``; keeps the requests."""

    backend = "test"

    def __init__(self, *answers: str | None, usage: Usage | None = None) -> None:
        self.answers = list(answers)
        self.usage = usage or Usage()
        self.requests: list[TurnRequest] = []

    async def run_turn(self, request: TurnRequest) -> Transcript:
        self.requests.append(request)
        answer = self.answers.pop(0)
        if answer is None:
            return Transcript(source="test", error="model API error: HTTP 529")
        return Transcript(source="test", assistant_text=(answer,), usage=self.usage)

    async def aclose(self) -> None:
        pass

"""One typed transcript for every way of getting model output."""

from skilltest.transcript.model import (
    ApiRetry,
    PermissionDenial,
    ResultEvent,
    ToolCall,
    Transcript,
    Usage,
)
from skilltest.transcript.origin import AnsweredBy

__all__ = [
    "AnsweredBy",
    "ApiRetry",
    "PermissionDenial",
    "ResultEvent",
    "ToolCall",
    "Transcript",
    "Usage",
]

"""One typed transcript for every way of getting model output."""

from skilltest.transcript.model import (
    ApiRetry,
    PermissionDenial,
    ResultEvent,
    ToolCall,
    Transcript,
    Usage,
)

__all__ = ["ApiRetry", "PermissionDenial", "ResultEvent", "ToolCall", "Transcript", "Usage"]

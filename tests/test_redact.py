"""A secret is redacted in every form a model or an agent may repeat it in: whole, in pieces of
12 characters or more, base64 (at any alignment, URL-safe too), percent-encoded, hex, and in
any case."""

from __future__ import annotations

import base64
import binascii
from urllib.parse import quote

import pytest

from skilltest.redact import Redactor, encodings, map_strings

KEY = "sk-ant-api03-Zx9yWq/7+kP2mN4vB8cR1tL6hJ3gF5dS0aE"
LABEL = "[REDACTED:ANTHROPIC_API_KEY]"


def forms_of(secret: str) -> dict[str, str]:
    raw = secret.encode()
    return {
        "plain": secret,
        "base64": base64.b64encode(raw).decode(),
        "base64 after a prefix": base64.b64encode(b"Bearer " + raw).decode(),
        "base64 of user:key": base64.b64encode(b"x:" + raw + b"\n").decode(),
        "urlsafe base64": base64.urlsafe_b64encode(b"ab" + raw).decode().rstrip("="),
        "percent": quote(secret, safe=""),
        "hex": binascii.hexlify(raw).decode(),
        "HEX": binascii.hexlify(raw).decode().upper(),
        "upper case": secret.upper(),
        "lower case": secret.lower(),
        "swapped case": secret.swapcase(),
    }


@pytest.mark.parametrize(("form", "text"), list(forms_of(KEY).items()))
def test_every_form_of_a_key_is_redacted(form, text):
    redact = Redactor({"ANTHROPIC_API_KEY": KEY})
    shown = redact(f"the agent said: {text} (end)")
    assert LABEL in shown, form
    for other in forms_of(KEY).values():
        for start in range(0, max(1, len(other) - 16), 4):
            assert other[start : start + 16] not in shown, (form, other)


def test_ordinary_text_is_left_alone():
    redact = Redactor({"ANTHROPIC_API_KEY": KEY})
    text = "Run lgtm loki query 'count_over_time({service_name=\"checkout\"}[5m])' --since 1h"
    assert redact(text) == text
    assert (
        redact(base64.b64encode(text.encode()).decode()) == base64.b64encode(text.encode()).decode()
    )


def test_a_short_secret_is_redacted_whole_in_any_case():
    redact = Redactor({"WORLD_AGENT_TOKEN": "tok-4f9a2"})
    assert redact("token TOK-4F9A2 and tok-4f9a2.") == (
        "token [REDACTED:WORLD_AGENT_TOKEN] and [REDACTED:WORLD_AGENT_TOKEN]."
    )


def test_the_encodings_hold_no_secret_unchanged():
    forms = encodings(KEY)
    assert KEY not in forms
    assert all(len(form) >= 8 for form in forms)


def test_every_string_of_a_document_is_mapped():
    redact = Redactor({"ANTHROPIC_API_KEY": KEY})
    document = {"a": [KEY, {"b": (base64.b64encode(KEY.encode()).decode(),)}], "n": 3}
    assert map_strings(document, redact) == {"a": [LABEL, {"b": [LABEL]}], "n": 3}

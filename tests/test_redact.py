"""A secret is redacted in every form a model or an agent may repeat it in: whole, in pieces of
12 characters or more, base64 (at any alignment, URL-safe too), percent-encoded, hex, and in
any case."""

from __future__ import annotations

import base64
import binascii
import json
from urllib.parse import quote

import pytest

from skilltest.redact import (
    Redactor,
    declarations_kept_apart,
    declare_secrets,
    encodings,
    map_strings,
)

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


# --- split, wrapped, per-byte and per-character forms ----------------------------------------

ZWSP = "\u200b"


def _wrap(text: str, width: int) -> str:
    return "\n".join(text[i : i + width] for i in range(0, len(text), width))


def split_forms_of(secret: str) -> dict[str, str]:
    """What an agent's shell commands make of a key: ``fold``, ``base64 -w``, ``xxd -p``,
    ``od``, and a Python one-liner's per-byte and per-character encodings."""
    raw = secret.encode()
    hexed = raw.hex()
    forms = {
        "fold -w8": _wrap(secret, 8),
        "fold -w1": _wrap(secret, 1),
        "zero-width spaces": ZWSP.join(secret),
        "zero-width joiners and spaces": "\u200d ".join(secret),
        "soft hyphens": "\u00ad".join(secret),
        "percent per byte": "".join(f"%{b:02x}" for b in raw),
        "PERCENT per byte": "".join(f"%{b:02X}" for b in raw),
        "\\u escapes": "".join(f"\\u{ord(c):04x}" for c in secret),
        "\\u escapes, escaped again": "".join(f"\\\\u{ord(c):04X}" for c in secret),
        "hex, colon-separated": ":".join(f"{b:02x}" for b in raw),
        "HEX, space-separated": " ".join(f"{b:02X}" for b in raw),
        "xxd -p": _wrap(hexed, 60),
        "hex folded at 7": _wrap(hexed, 7),
        "od -An -tx1": "\n".join(
            " " + " ".join(f"{b:02x}" for b in raw[i : i + 16]) for i in range(0, len(raw), 16)
        ),
        "a list of characters": repr(list(secret)),
        "fold -w8 inside JSON": json.dumps(_wrap(secret, 8)),
        "zero-width spaces inside ASCII JSON": json.dumps(ZWSP.join(secret)),
        "spaced out": " ".join(secret),
    }
    for lead in (0, 1, 2):
        for width in (10, 4, 76):
            encoded = base64.b64encode(b"x" * lead + raw).decode()
            forms[f"base64 -w{width} after {lead} byte(s)"] = _wrap(encoded, width)
        encoded = base64.urlsafe_b64encode(b"y" * lead + raw).decode()
        forms[f"urlsafe base64 folded at 9 after {lead} byte(s)"] = _wrap(encoded, 9)
    return forms


@pytest.mark.parametrize(("form", "text"), list(split_forms_of(KEY).items()))
def test_a_key_split_wrapped_or_encoded_per_byte_is_redacted(form, text):
    from tests.leaks import leaks

    assert leaks(text, KEY), f"the test's own check must see the {form} form"
    redact = Redactor({"ANTHROPIC_API_KEY": KEY})
    shown = redact(f"the agent printed:\n{text}\n(end)")
    assert LABEL in shown, form
    assert leaks(shown, KEY) == [], form
    assert shown.startswith("the agent printed:") and shown.endswith("(end)")


def test_separators_between_words_of_ordinary_text_are_left_alone():
    redact = Redactor({"ANTHROPIC_API_KEY": KEY})
    text = "s k - a n t: a p i, 0 3 and the rest of an ordinary sentence\n" + _wrap(KEY, 8)[:30]
    assert redact(text) == text


def test_redacting_a_split_key_in_a_long_text_ends_no_hang():
    """Linear time: separators everywhere, and near-misses of the key at every position."""
    import time

    near = _wrap(KEY[:-1], 1) + "\n#"
    text = (near + ZWSP * 11 + ": ") * 20_000
    started = time.monotonic()
    shown = Redactor({"ANTHROPIC_API_KEY": KEY})(text + ZWSP.join(KEY))
    assert time.monotonic() - started < 120
    assert shown.endswith(LABEL)


@pytest.mark.parametrize(
    "token", ["abcdefghijklmnopqrstuvwxyz01234_", "-bcdefghijklmnopqrstuvwxyz012345"]
)
def test_a_token_that_starts_or_ends_with_a_separator_is_redacted_whole(token):
    """URL-safe tokens (a world's agent token) may begin or end with ``_`` or ``-``: none of it
    is left beside the label (a replay would miss on what was left)."""
    shown = Redactor({"WORLD_AGENT_TOKEN": token})(f"token={token}\n")
    assert shown == "token=[REDACTED:WORLD_AGENT_TOKEN]\n"


def test_a_declared_secret_is_kept_out_by_every_redactor_made_after_and_then_forgotten():
    with declarations_kept_apart():
        declare_secrets(["acme-customer-7731", "acme", "abc"])
        redact = Redactor({})
        shown = redact("for acme-customer-7731 of ACME (acme), abc")
        assert shown == "for [REDACTED:SUITE_SECRET] of ACME ([REDACTED:SUITE_SECRET]), abc"
        # In any form, as a credential: here base64.
        encoded = base64.b64encode(b"acme-customer-7731").decode()
        assert "[REDACTED:SUITE_SECRET]" in Redactor({})(encoded)
    assert Redactor({})("for acme-customer-7731") == "for acme-customer-7731"


def test_the_known_redactor_holds_the_environments_credentials_and_what_suites_declared():
    from skilltest.redact import known_redactor

    with declarations_kept_apart():
        declare_secrets(["team-0123456789abcdef", "corp"])
        redact = known_redactor({"ANTHROPIC_API_KEY": KEY, "HOME": "/home/someone-long"})
        assert redact(f"key {KEY[7:]} team team-0123456789abcdef host corp.example home") == (
            f"key {LABEL} team [REDACTED:SUITE_SECRET] host [REDACTED:SUITE_SECRET].example home"
        )
        assert redact("/home/someone-long") == "/home/someone-long"  # not a credential
    assert known_redactor({})("team-0123456789abcdef corp") == "team-0123456789abcdef corp"

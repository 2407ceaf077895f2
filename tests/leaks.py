"""Whether a text still holds a secret in any form an agent can print it in, decode-aware: the
test side of the redactor, written apart from it.

The text and every encoded form of the secret are squeezed alike (JSON escapes of line breaks
and invisible characters, white space, zero-width characters and separating punctuation taken
out, lower-cased), so a secret folded into lines, wrapped, joined by zero-width spaces or
separated by colons is found as its contiguous form; so is the secret written backwards.
"""

from __future__ import annotations

import base64
import re

_ESCAPES = re.compile(r"\\(?:[nrt]|u(?:00ad|200[b-f]|2060|feff))", re.IGNORECASE)
_SEPARATORS = re.compile(r"[\s\u00ad\u200b-\u200f\u2060\ufeff:;,.|'\"`_-]+")


def squeeze(text: str) -> str:
    """``text`` without separators, doubled backslashes made one, lower-cased."""
    text = text.replace("\\\\", "\\")
    return _SEPARATORS.sub("", _ESCAPES.sub("", text)).lower()


def secret_forms(secret: str) -> dict[str, str]:
    """Every contiguous form of ``secret``, by name (each squeezed)."""
    raw = secret.encode()
    forms = {
        "plain": secret,
        "reversed": secret[::-1],
        "hex": raw.hex(),
        "percent per byte": "".join(f"%{b:02x}" for b in raw),
        "\\u escapes": "".join(f"\\u{ord(c):04x}" for c in secret),
    }
    for name, encode in (
        ("base64", base64.b64encode),
        ("urlsafe base64", base64.urlsafe_b64encode),
    ):
        for lead in (0, 1, 2):
            text = encode(b"\0" * lead + raw).decode().rstrip("=")
            tail = 0 if (lead + len(raw)) % 3 == 0 else 4
            forms[f"{name} at offset {lead}"] = text[4 if lead else 0 : len(text) - tail]
    return {name: squeeze(form) for name, form in forms.items()}


def leaks(text: str, secret: str, *, piece: int = 16) -> list[str]:
    """The forms of ``secret`` that ``text`` holds: whole, or any ``piece`` characters of one,
    at least ``piece // 2`` characters of the secret (``\\u`` escapes take six characters for
    one: sixteen of them, under three characters of the secret, are no sign of it)."""
    squeezed = squeeze(text)
    found = []
    for name, form in secret_forms(secret).items():
        size = max(piece, len(form) * (piece // 2) // max(1, len(secret)))
        pieces = {form[i : i + size] for i in range(0, max(1, len(form) - size + 1))}
        if any(p in squeezed for p in pieces):
            found.append(name)
    return found

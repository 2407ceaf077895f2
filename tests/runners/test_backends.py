"""Choosing a backend: the one asked for, else live with credentials, else the emulator."""

import pytest

from skilltest.errors import CredentialsError
from skilltest.runners.backends import choose_backend

KEY = {"ANTHROPIC_API_KEY": "sk-ant-x"}
OAUTH = {"CLAUDE_CODE_OAUTH_TOKEN": "oauth-x"}

CASES = [
    # (requested, live backend of the layer, environment, chosen, notice shown)
    (None, "anthropic", {}, "emulator", True),
    (None, "anthropic", KEY, "anthropic", False),
    (None, "anthropic", OAUTH, "emulator", True),  # the SDK cannot use a CLI OAuth token
    (None, "claude", OAUTH, "claude", False),
    (None, "claude", {}, "emulator", True),
    ("emulator", "claude", KEY, "emulator", True),
    ("claude", "anthropic", OAUTH, "claude", False),
    ("anthropic", "anthropic", KEY, "anthropic", False),
]


@pytest.mark.parametrize(("requested", "live", "env", "chosen", "notice"), CASES)
def test_backend_choice(requested, live, env, chosen, notice):
    choice = choose_backend(requested, live=live, emulator_notice="stand-in", environ=env)
    assert choice.name == chosen
    assert (choice.notice == "stand-in") is notice


@pytest.mark.parametrize(
    ("requested", "message"),
    [
        ("anthropic", "--backend anthropic needs ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN)"),
        (
            "claude",
            "--backend claude needs ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN or CLAUDE_CODE_OAUTH_TOKEN",
        ),
    ],
)
def test_a_live_backend_without_credentials_says_what_to_set(requested, message):
    with pytest.raises(CredentialsError) as caught:
        choose_backend(requested, live="claude", emulator_notice="", environ={})
    assert str(caught.value).startswith(message)
    assert "fix:" in str(caught.value)

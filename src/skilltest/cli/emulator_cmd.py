"""``skilltest emulator serve``: run the model emulator in the foreground until Ctrl-C."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skilltest.cli import add_serve_command, serve_until_stopped
from skilltest.cli.options import tcp_port
from skilltest.errors import ConfigurationError

if TYPE_CHECKING:
    from skilltest.emulator import RecordedRequest


def register(subparsers: Any) -> None:
    """Adds the ``emulator`` command and its ``serve`` subcommand."""
    serve = add_serve_command(
        subparsers,
        "emulator",
        description="The offline model emulator: a scripted stand-in for the Anthropic "
        "Messages API (the anthropic SDK, the claude CLI), OpenAI's Responses and Chat "
        "Completions APIs (the openai SDK, Codex, OpenCode) and Google's Gemini API (Gemini "
        "CLI). Not a real model.",
        serve_help="serve a model script over HTTP until Ctrl-C",
        serve_description="Serves a model script over HTTP until Ctrl-C. Point a client at it "
        "with ANTHROPIC_BASE_URL=<printed URL> ANTHROPIC_API_KEY=sk-fake (any key is accepted), "
        "an OpenAI client at <printed URL>/v1, or Gemini CLI with "
        "GOOGLE_GEMINI_BASE_URL=<printed URL>.",
    )
    serve.add_argument("--script", required=True, metavar="FILE", help="model script (YAML)")
    serve.add_argument("--host", default="127.0.0.1", help="interface (default 127.0.0.1)")
    serve.add_argument("--port", type=tcp_port, default=0, help="TCP port; 0 picks a free one")
    serve.add_argument(
        "--quiet", action="store_true", help="do not print a line per request on stderr"
    )
    serve.add_argument(
        "--batch-dir",
        type=Path,
        metavar="DIR",
        help="keep Message Batches in DIR (one JSON file each), so that an emulator started "
        "again on DIR still has them (default: in memory)",
    )
    serve.set_defaults(handler=serve_command)


def _describe(request: RecordedRequest) -> str:
    status = "no answer" if request.status is None else str(request.status)
    parts = [f"{request.method} {request.path}", status]
    if request.rule_id is not None:
        parts.append(f"rule={request.rule_id}")
    elif request.path == "/v1/messages" or request.api is not None:
        parts.append("rule=(default)")
    if request.agent is not None:
        parts.append(f"agent={request.agent}")
    if request.fault:
        parts.append(f"fault={request.fault}")
    return "  ".join(parts)


def serve_command(args: argparse.Namespace) -> int:
    """Loads the script and serves it until a stop signal; exits as a stopped command does
    (130 on Ctrl-C, 128 + the signal's number on SIGTERM or SIGHUP)."""
    # Imported here: every other command starts without loading the emulator.
    from skilltest.emulator import EmulatorServer, ModelScript

    script = ModelScript.load(args.script)

    def log(request: RecordedRequest) -> None:
        print(_describe(request), file=sys.stderr, flush=True)

    try:
        server = EmulatorServer(
            script,
            host=args.host,
            port=args.port,
            on_request=None if args.quiet else log,
            batch_dir=args.batch_dir,
        )
    except OSError as exc:  # in use, not an address of this machine, unknown host name
        raise ConfigurationError(
            f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}\n"
            "  fix: pick a free port, or --port 0 to let the system choose one; "
            "--host must be an address of this machine (default 127.0.0.1)"
        ) from exc
    with server:
        banner = (
            f"emulator listening on {server.base_url} (scripted stand-in model, not a real model)",
            f"  script: {script.source} ({len(script.rules)} rules); Ctrl-C stops",
        )
        return serve_until_stopped(banner, lambda: "emulator stopped")

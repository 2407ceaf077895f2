"""``skilltest world serve``: run a world on its own for other agents and harnesses."""

from __future__ import annotations

import argparse
import json
import shlex
import shutil
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skilltest.cli import add_serve_command, serve_until_stopped
from skilltest.cli.options import tcp_port
from skilltest.errors import ConfigurationError

if TYPE_CHECKING:
    from skilltest.world.instance import WorldInstance

ENV_FILE_NAME = "world.env"
"""The agent's variables as ``export`` lines, written beside the CA (never the control token)."""


def register(subparsers: Any) -> None:
    """Adds the ``world`` command and its ``serve`` subcommand."""
    serve = add_serve_command(
        subparsers,
        "world",
        description="A controlled world: fake services on the real hostnames a skill uses, "
        "reached through a proxy that answers them and refuses everything else.",
        serve_help="serve a world file through its proxy until Ctrl-C",
        serve_description="Serves a world file until Ctrl-C: prints the proxy address, the CA "
        "file and the agent and control tokens. Point a client at it with HTTPS_PROXY=<proxy> "
        "and the CA (CURL_CA_BUNDLE, SSL_CERT_FILE, NODE_EXTRA_CA_CERTS...), or source the "
        "printed variables file.",
    )
    serve.add_argument("world", metavar="WORLD.yaml", type=Path, help="the world file")
    serve.add_argument("--profile", metavar="NAME", help="fault profile to apply")
    serve.add_argument("--host", default="127.0.0.1", help="interface (default 127.0.0.1)")
    serve.add_argument(
        "--port", type=tcp_port, default=0, help="the HTTP proxy's port; 0 picks a free one"
    )
    serve.add_argument(
        "--socks-port", type=tcp_port, default=0, help="the SOCKS5 port; 0 picks a free one"
    )
    serve.add_argument(
        "--quiet", action="store_true", help="do not print a line per request on stderr"
    )
    serve.set_defaults(handler=serve_command)


def _log(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def serve_command(args: argparse.Namespace) -> int:
    """Loads the world and serves it until a stop signal; exits as a stopped command does
    (130 on Ctrl-C, 128 + the signal's number on SIGTERM or SIGHUP), having said what it saw."""
    # Imported here: every other command starts without loading the world's dependencies.
    from skilltest.world.instance import PROXY_ENV, WorldInstance
    from skilltest.world.model import load_world

    world = load_world(args.world)
    folder = Path(tempfile.mkdtemp(prefix="skilltest-world-"))
    try:
        try:
            instance = WorldInstance(
                world,
                profile=args.profile,
                folder=folder,
                mode=None,
                host=args.host,
                port=args.port,
                socks_port=args.socks_port,
                log=None if args.quiet else _log,
            )
            instance.start()
        except OSError as exc:  # in use, not an address of this machine, unknown host name
            raise ConfigurationError(
                f"cannot listen on {args.host} (ports {args.port} and {args.socks_port}): "
                f"{exc.strerror or exc}\n"
                "  fix: pick free ports, or 0 to let the system choose; "
                "--host must be an address of this machine (default 127.0.0.1)"
            ) from exc
        try:
            env_file = folder / ENV_FILE_NAME
            env_file.write_text(
                "".join(f"export {k}={shlex.quote(v)}\n" for k, v in instance.env().items())
            )
            env_file.chmod(0o600)
            banner = _banner(instance, env_file, cooperative=instance.mode == PROXY_ENV)

            def stopped() -> str:
                calls = instance.calls
                writes = sum(call.write for call in calls)
                return (
                    f"world stopped: {len(calls)} calls ({writes} writes), "
                    f"{len(instance.violations)} egress violations"
                )

            return serve_until_stopped(banner, stopped)
        finally:
            instance.close()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _banner(instance: WorldInstance, env_file: Path, *, cooperative: bool) -> list[str]:
    services = ", ".join(
        f"{service.name} ({' '.join(service.hosts)})" for service in instance.world.services
    )
    auth = sorted(
        {service.auth_env for service in instance.world.services if service.auth_env is not None}
    )
    proxy = instance.proxy
    lines = [
        f"world listening: proxy {proxy.url} (SOCKS5 on port {proxy.socks_port})",
        f"  services:      {services}",
        f"  profile:       {instance.profile or 'none'}",
        f"  CA file:       {instance.ca.ca_file}",
        f"  CA bundle:     {instance.ca.bundle_file} (the CA and the system's roots)",
        f"  agent token:   {instance.agent_token}"
        + (f" (in {', '.join(auth)})" if auth else " (no service asks for one)"),
        f"  control token: {instance.control_token} "
        "(GET /_skilltest/calls, GET /_skilltest/state, POST /_skilltest/reset on any host)",
        f"  variables:     {env_file} (source it: the agent token, the proxy and the CA)",
    ]
    settings = instance.settings()
    if not cooperative:
        lines.append(f"  claude --settings: {json.dumps(settings, separators=(',', ':'))}")
    host = instance.world.services[0].hosts[0] if instance.world.services else "HOST"
    lines.append(
        f"  try: (. {shlex.quote(str(env_file))} && curl https://{host}/health)   Ctrl-C stops"
    )
    return lines

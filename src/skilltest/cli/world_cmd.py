"""``skilltest world serve``: run a world on its own for other agents and harnesses;
``skilltest world contract``: its fakes' answers against the live service's, read-only."""

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
        "reached through a proxy that answers them and refuses everything else; `contract` "
        "compares the fakes' answers with the live service's.",
        serve_help="serve a world file through its proxy until Ctrl-C",
        serve_description="Serves a world file until Ctrl-C: prints the proxy address, the CA "
        "file and the agent and control tokens. Point a client at it with HTTPS_PROXY=<proxy> "
        "and the CA (CURL_CA_BUNDLE, SSL_CERT_FILE, NODE_EXTRA_CA_CERTS...), or source the "
        "printed variables file.",
        more=_register_contract,
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


def _register_contract(actions: Any) -> None:
    contract = actions.add_parser(
        "contract",
        help="compare the fake's answers with the live service's, for the reads the world "
        "marks safe to probe",
        description="Sends each read a service lists in `contract: {probe: [...]}` (GET or "
        "HEAD only) to the service's real host over HTTPS, with the credential from its "
        "`auth: {env: ...}` variable, and compares the status, the content type and the "
        "body's shape (field names and JSON types) with what the fake answers. Exit 0 when "
        "every probe is the same, 1 on drift, 2 without --live (it then lists what it would "
        "send) or on bad input.",
    )
    contract.add_argument("world", metavar="WORLD.yaml", type=Path, help="the world file")
    contract.add_argument(
        "--live",
        action="store_true",
        help="really send the probes to the live service (without it nothing is sent)",
    )
    contract.add_argument(
        "--resolve",
        metavar="HOST=ADDRESS:PORT",
        action="append",
        default=[],
        help="send a declared host's probes to a loopback address instead (as curl's "
        "--resolve), e.g. api.tickets.example.com=127.0.0.1:8443; only loopback is accepted",
    )
    contract.add_argument(
        "--ca-file",
        metavar="PEM",
        type=Path,
        help="trust only this CA for the live answers (a stand-in's or a gateway's); "
        "default: the system's roots",
    )
    contract.set_defaults(handler=contract_command)


def contract_command(args: argparse.Namespace) -> int:
    """``skilltest world contract``: the probes' answers, live against the fake's."""
    import os
    import ssl

    from skilltest.redact import declare_secrets, known_redactor
    from skilltest.world.live_contract import (
        check_probe,
        credentials,
        parse_resolve,
        plan,
        world_policy,
    )
    from skilltest.world.model import load_world

    world = load_world(args.world)
    planned = plan(world)
    if not planned:
        raise ConfigurationError(
            f"{args.world}: no service declares a probe, so there is nothing to compare\n"
            '  fix: add contract: {probe: ["GET /tickets?status=P1"]} to a service, naming '
            "reads that are safe to send to the real service"
        )
    policy = world_policy(world)
    resolve: dict[str, tuple[str, int]] = {}
    for text in args.resolve:
        host, address, port = parse_resolve(text, policy)
        resolve[host] = (address, port)
    if not args.live:
        print(f"would send {len(planned)} read(s) to the live service:")
        for item in planned:
            pinned = resolve.get(item.service.hosts[0])
            via = f" via {pinned[0]}:{pinned[1]}" if pinned else ""
            print(f"  {item.describe()}{via}")
        raise ConfigurationError(
            "nothing was sent: world contract reaches the real service only with --live\n"
            f"  fix: skilltest world contract {args.world} --live"
        )
    values = credentials(planned, os.environ)
    declare_secrets(values.values())
    redact = known_redactor()
    try:
        context = ssl.create_default_context(
            cafile=str(args.ca_file) if args.ca_file is not None else None
        )
    except (OSError, ssl.SSLError) as exc:
        raise ConfigurationError(
            f"--ca-file {args.ca_file}: cannot be read as a PEM CA: {exc}\n"
            "  fix: name a PEM file holding the CA certificate"
        ) from exc
    drifted = 0
    for item in planned:
        credential = values.get(item.credential) if item.credential else None
        try:
            result = check_probe(
                item, policy=policy, credential=credential, resolve=resolve, context=context
            )
        except ConfigurationError as exc:
            raise ConfigurationError(redact(str(exc))) from None
        head = f"{item.probe.label} ({item.service.name}, {item.url})"
        if not result.drifts:
            print(f"same   {head}")
            continue
        drifted += 1
        print(f"drift  {head}: {len(result.drifts)} difference(s)")
        for drift in result.drifts:
            print(redact(f"  {drift}"))
    print(f"{len(planned)} probe(s): {len(planned) - drifted} same, {drifted} drifted")
    return 1 if drifted else 0


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

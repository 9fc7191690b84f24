"""`tidetower gm`: send one GM command to a running tower and print its reply."""

from __future__ import annotations

import json
import queue
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import click

from tidetower.mqtt.client import BrokerClient, Message
from tidetower.mqtt.options import node_options, node_settings
from tidetower.mqtt.topics import Topics

COMMANDS = ("declare", "tide", "system", "roll", "die", "undo", "reread", "rethrow")


def parse_fields(fields: tuple[str, ...]) -> dict[str, Any]:
    """KEY=VALUE pairs as a JSON body: values that read as JSON (4, true, [..]) are kept so."""
    body: dict[str, Any] = {}
    for field in fields:
        key, sep, text = field.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"{field!r}: write fields as KEY=VALUE, e.g. value=4")
        try:
            body[key] = json.loads(text)
        except json.JSONDecodeError:
            body[key] = text
    return body


def _reply(replies: queue.Queue[Message], request: str, timeout: float) -> dict[str, Any]:
    """The reply on cmd/result that carries our request id, within `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0:
        try:
            message = replies.get(timeout=left)
        except queue.Empty:
            break
        try:
            reply = json.loads(message.payload)
        except ValueError:
            continue  # somebody else's garbage on cmd/result
        if isinstance(reply, dict) and reply.get("id") == request:
            return reply
    raise click.ClickException(
        f"no reply within {timeout} s: is the tower running and on this broker and table?"
    )


@click.command("gm")
@click.argument("command", type=click.Choice(COMMANDS))
@click.argument("fields", nargs=-1)
@node_options
@click.option("--timeout", default=5.0, show_default=True, help="Seconds to wait for the reply.")
def gm_command(
    command: str,
    fields: tuple[str, ...],
    config_path: Path | None,
    broker: str | None,
    table: str | None,
    timeout: float,
) -> None:
    """Send one GM command to the running tower and print its reply.

    Fields are KEY=VALUE, e.g. `tidetower gm die index=0 kind=d6 value=4`,
    `tidetower gm reread`, `tidetower gm tide weight_a=6 weight_b=12 size=battle`.
    Exits 1 when the tower refuses the command.
    """
    settings = node_settings(config_path, broker, table)
    topics = Topics.of(settings)
    body = {"id": f"cli-{uuid.uuid4().hex[:8]}", **parse_fields(fields)}
    replies: queue.Queue[Message] = queue.Queue()
    client = BrokerClient(settings, f"tidetower-gm-{body['id']}")
    client.subscribe(topics.command_result, replies.put, qos=1)
    client.start()
    try:
        if not client.wait_connected(timeout):
            raise click.ClickException(
                f"cannot reach the broker at {settings.host or '127.0.0.1'}:{settings.port}"
            )
        client.publish(topics.command(command), json.dumps(body), qos=1)
        answer = _reply(replies, body["id"], timeout)
    finally:
        client.stop()
    click.echo(json.dumps(answer))
    if not answer.get("ok"):
        sys.exit(1)

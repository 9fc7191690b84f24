"""`tidetower gm`: send one GM command to a running tower and print its reply as a sentence
(`--json`: the reply itself). `reply_to=last` on `declare` names the last opening roll, found
in the retained `session`."""

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
from tidetower.mqtt.settings import MqttSettings
from tidetower.mqtt.topics import Topics
from tidetower.mqtt.wording import reply_line

COMMANDS = ("declare", "tide", "system", "roll", "die", "undo", "redo", "reread", "rethrow")
Reply = dict[str, Any]
LAST = "last"
"""`reply_to=last`: the latest roll of the session that awaits a reply."""


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


def _reply(replies: queue.Queue[Message], request: str, timeout: float) -> Reply:
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


def last_opening(sessions: queue.Queue[Message], timeout: float) -> str:
    """The id of the last opening roll in the retained `session`, within `timeout` seconds
    (read as plain JSON: fields this version does not know are no reason to fail)."""
    try:
        session = json.loads(sessions.get(timeout=timeout).payload)
    except queue.Empty:
        raise click.ClickException(
            f"no session within {timeout} s to find the last opening roll in: "
            "is the tower running and on this broker and table?"
        ) from None
    except ValueError as error:
        raise click.ClickException(f"the retained session is not JSON: {error}") from None
    history = session.get("history", []) if isinstance(session, dict) else []
    opening = next((h["id"] for h in reversed(history) if h.get("awaiting_reply")), None)
    if opening is None:
        raise click.ClickException("no roll of the session awaits a reply: give reply_to=ID")
    return str(opening)


@click.command("gm")
@click.argument("command", type=click.Choice(COMMANDS))
@click.argument("fields", nargs=-1)
@node_options
@click.option("--timeout", default=5.0, show_default=True, help="Seconds to wait for the reply.")
@click.option("--json", "as_json", is_flag=True, help="Print the reply as JSON, for scripts.")
def gm_command(
    command: str,
    fields: tuple[str, ...],
    config_path: Path | None,
    broker: str | None,
    table: str | None,
    timeout: float,
    as_json: bool,
) -> None:
    """Send one GM command to the running tower and say what it did.

    Fields are KEY=VALUE, e.g. `tidetower gm die index=0 kind=d6 value=4`,
    `tidetower gm die index=0 not_a_die=true` (no die there), `tidetower gm reread`,
    `tidetower gm tide weight_a=6 weight_b=12 size=battle`,
    `tidetower gm declare actor=Kim side=b reply_to=last` (a reply to the last opening roll).
    Exits 1 when the tower refuses the command.
    """
    settings = node_settings(config_path, broker, table)
    body = {"id": f"cli-{uuid.uuid4().hex[:8]}", **parse_fields(fields)}
    answer = send(settings, command, body, timeout)
    click.echo(json.dumps(answer) if as_json else reply_line(answer, body))
    if not answer.get("ok"):
        sys.exit(1)


def send(settings: MqttSettings, command: str, body: dict[str, Any], timeout: float) -> Reply:
    """Send one command and return the tower's reply; `reply_to=last` on a declare is
    replaced, in `body`, by the last opening roll's id from the retained `session`."""
    topics = Topics.of(settings)
    replies: queue.Queue[Message] = queue.Queue()
    sessions: queue.Queue[Message] = queue.Queue()
    client = BrokerClient(settings, f"tidetower-gm-{body['id']}")
    client.subscribe(topics.command_result, replies.put, qos=1)
    replying = command == "declare" and body.get("reply_to") == LAST
    if replying:
        client.subscribe(topics.session, sessions.put, qos=1)
    client.start()
    try:
        if not client.wait_connected(timeout):
            raise click.ClickException(f"cannot reach the broker at {client.where}")
        if replying:
            body["reply_to"] = last_opening(sessions, timeout)
        client.publish(topics.command(command), json.dumps(body), qos=1)
        return _reply(replies, body["id"], timeout)
    finally:
        client.stop()

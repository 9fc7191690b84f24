"""`tidetower gm`: send one GM command to a running tower and print its reply as a sentence
(`--json`: the reply itself). `reply_to=last` on `declare` names the last opening roll, found
in the retained `session`.

On a LAN table it signs in as the GM (user `gm`, the token as the password): with
`--token-file FILE`, else `$TIDETOWER_GM_TOKEN`, else the config's own `username`, else, when
the config says `lan`, the `gm-token` the tower keeps beside its store.
"""

from __future__ import annotations

import json
import os
import queue
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import click

from tidetower.mqtt.client import BrokerClient, Message, secret_client_id
from tidetower.mqtt.lan import GM_USER, TOKEN_FILE
from tidetower.mqtt.options import node_options, node_settings
from tidetower.mqtt.registry import COMMANDS, reply_line
from tidetower.mqtt.settings import MqttSettings
from tidetower.mqtt.topics import Topics
from tidetower.mqtt.towerfiles import configured_store
from tidetower.mqtt.typed_dice import is_typed_die, parse_dice

Reply = dict[str, Any]
LAST = "last"
"""`reply_to=last`: the latest roll of the session that awaits a reply."""
TOKEN_ENV = "TIDETOWER_GM_TOKEN"
"""The environment variable that may hold the GM's token itself."""
NEEDS_TOKEN = (
    f"refused: this command needs the GM's token (--token-file FILE, the tower's {TOKEN_FILE},"
    f" or ${TOKEN_ENV})"
)


def parse_fields(fields: tuple[str, ...]) -> dict[str, Any]:
    """KEY=VALUE pairs as a JSON body: values that read as JSON (4, true, [..]) are kept so;
    dice typed as for `session roll` (`d6=5,2 d20=13`, or `dice="d6=5,2 d20=13"`) are the
    body's `dice`."""
    body: dict[str, Any] = {}
    typed = [field for field in fields if is_typed_die(field)]
    for field in fields:
        key, sep, text = field.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"{field!r}: write fields as KEY=VALUE, e.g. value=4")
        if is_typed_die(field):
            continue
        try:
            body[key] = json.loads(text)
        except json.JSONDecodeError:
            body[key] = text
    if isinstance(body.get("dice"), str):
        typed += body.pop("dice").split()
    if typed and "dice" in body:
        raise click.BadParameter("give the dice once: d6=5,2 or dice=[...], not both")
    if typed:
        body["dice"] = parse_dice(tuple(typed))
    return body


def _reply(replies: queue.Queue[Message], request: str, timeout: float) -> Reply | None:
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
    return None


def _silence(settings: MqttSettings, online: bool, timeout: float) -> click.ClickException:
    """Why no reply came, as likely as it can be told: a tower that is online (its retained
    `status`) hears commands, so an anonymous one was dropped by a broker that guards them
    (Mosquitto tells an MQTT 3.1.1 client nothing)."""
    if online and settings.username is None:
        return click.ClickException(NEEDS_TOKEN)
    if online:
        return click.ClickException(
            f"no reply within {timeout} s, though the tower is online: may user "
            f"{settings.username} send this command to table {settings.table}?"
        )
    return click.ClickException(
        f"no reply within {timeout} s: is the tower running and on this broker and table?"
    )


def warn_if_shared(token_file: Path) -> None:
    """One line on stderr when people other than its owner can read the GM's token (it still
    signs in with it): anyone who reads it can command the table."""
    try:
        mode = os.stat(token_file).st_mode
    except OSError:
        return  # the sign-in says in one line why it cannot read it
    if mode & 0o044:
        click.echo(
            f"warning: {token_file} can be read by others (mode {mode & 0o777:04o}), and whoever"
            f" reads it commands the table: chmod 600 {token_file}",
            err=True,
        )


def gm_login(settings: MqttSettings, token_file: Path | None, config: Path | None) -> MqttSettings:
    """The settings to sign in with: as the GM with the token from `token_file`, else from
    $TIDETOWER_GM_TOKEN, else the config's own user, else (config `lan`) the tower's token
    file beside its store when it is there; else anonymous."""
    gm: dict[str, object] = {"username": GM_USER, "password_env": None, "password_file": None}
    if token_file is not None:
        warn_if_shared(token_file)
        return settings.model_copy(update={**gm, "password_file": str(token_file)})
    if os.environ.get(TOKEN_ENV):
        return settings.model_copy(update={**gm, "password_env": TOKEN_ENV})
    kept = configured_store(config).parent / TOKEN_FILE
    if settings.username is None and (settings.lan or settings.guarded) and os.path.exists(kept):
        return settings.model_copy(update={**gm, "password_file": str(kept)})
    return settings


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
@click.argument("command", type=click.Choice(tuple(COMMANDS)))
@click.argument("fields", nargs=-1)
@node_options
@click.option(
    "--token-file",
    type=click.Path(path_type=Path, dir_okay=False, exists=True),
    help=f"the GM's token (the tower's {TOKEN_FILE}); else ${TOKEN_ENV}, else with a `lan` "
    "config the one beside its store",
)
@click.option("--timeout", default=5.0, show_default=True, help="Seconds to wait for the reply.")
@click.option("--json", "as_json", is_flag=True, help="Print the reply as JSON, for scripts.")
def gm_command(
    command: str,
    fields: tuple[str, ...],
    config_path: Path | None,
    broker: str | None,
    table: str | None,
    token_file: Path | None,
    timeout: float,
    as_json: bool,
) -> None:
    """Send one GM command to the running tower and say what it did.

    Fields are KEY=VALUE, e.g. `tidetower gm die index=0 kind=d6 value=4`,
    `tidetower gm die index=0 not_a_die=true` (no die there); a die's index is its number
    (`#N`, on the terminal and the page), kept for the whole throw while the others are
    entered, so `index=1` is always the die first listed as #1; dice are typed as for
    `session roll`: `tidetower gm roll d6=5,3,1 d20=13`; `tidetower gm reread`;
    `tidetower gm setup NAME=VALUE...` sets the tracker up afresh with the active system's
    settings (`tidetower session setup --help` lists them);
    `tidetower gm declare actor=Kim side=b reply_to=last` (a reply to the last opening roll),
    the system's own fields beside the shared ones (`mode=action pool=3 NAME=VALUE`).
    On a LAN table give the GM's token: `--token-file`, `$TIDETOWER_GM_TOKEN`, or a `lan`
    config's own. Exits 1 when the tower or the broker refuses the command.
    """
    settings = gm_login(node_settings(config_path, broker, table), token_file, config_path)
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
    online = threading.Event()
    client = _client(settings, secret_client_id("tidetower-gm-"))  # never the request's id
    client.subscribe(topics.command_result, replies.put, qos=1)
    client.subscribe(topics.status, lambda m: _follow(online, m), qos=1)
    replying = command == "declare" and body.get("reply_to") == LAST
    if replying:
        client.subscribe(topics.session, sessions.put, qos=1)
    try:
        _sign_in(client, timeout)
        if replying:
            body["reply_to"] = last_opening(sessions, timeout)
        client.publish(topics.command(command), json.dumps(body), qos=1)
        reply = _reply(replies, body["id"], timeout)
    finally:
        client.stop()
    if reply is None:
        raise _silence(settings, online.is_set(), timeout)
    return reply


def _client(settings: MqttSettings, client_id: str) -> BrokerClient:
    """A client for `settings`, or one line on a token or password it cannot read (the
    file named, never what it holds)."""
    try:
        return BrokerClient(settings, client_id)
    except ValueError as error:
        raise click.ClickException(f"cannot sign in as {settings.username}: {error}") from None


def _follow(online: threading.Event, message: Message) -> None:
    """Keep `online` as the tower's retained `status` says."""
    if message.payload == b"online":
        online.set()
    else:
        online.clear()


def _sign_in(client: BrokerClient, timeout: float) -> None:
    """Connect within `timeout` seconds, or one line: the login refused, or no broker."""
    outcome: queue.Queue[str | None] = queue.Queue()
    client.on_connect.append(lambda: outcome.put(None))
    client.on_refused.append(outcome.put)
    client.start()
    try:
        refusal = outcome.get(timeout=timeout)
    except queue.Empty:
        raise click.ClickException(f"cannot reach the broker at {client.where}") from None
    if refusal is not None:
        who = client.settings.username
        login = "the GM's token" if who == GM_USER else f"user {who}" if who else "a guest"
        raise click.ClickException(
            f"refused: the broker at {client.where} does not accept {login} ({refusal})"
        )

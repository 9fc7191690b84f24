"""`tidetower gm`: a GM command from the shell reaches the tower and its reply comes back."""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from mqtt_fixtures import WAIT, Listener, Mosquitto, free_port

from tidetower.engine.dice import Die, DieKind, Roll
from tidetower.engine.rules import RollContext
from tidetower.engine.table import Table
from tidetower.firmware.cli import main
from tidetower.mqtt.gm_cli import NEEDS_TOKEN, TOKEN_ENV, parse_fields
from tidetower.mqtt.publisher import TablePublisher
from tidetower.mqtt.runtime import table_link
from tidetower.mqtt.settings import MqttSettings
from tidetower.mqtt.topics import Topics


def test_fields_keep_their_json_types() -> None:
    assert parse_fields(("index=0", "kind=d6", "value=4", "tide_linked=true")) == {
        "index": 0,
        "kind": "d6",
        "value": 4,
        "tide_linked": True,
    }


def test_gm_sets_up_the_tide_and_hears_refusals(mosquitto: Mosquitto, tmp_path: Path) -> None:
    settings = mosquitto.settings()
    tide = Topics.of(settings).tide
    where = [
        "--broker",
        f"127.0.0.1:{mosquitto.port}",
        "--table",
        settings.table,
        "--timeout",
        str(WAIT),
    ]  # the 5 s default is for a GM at a table, not a busy CI
    runner = CliRunner()
    with (
        TablePublisher(Table(tmp_path / "s.db"), settings) as publisher,
        Listener(settings, tide) as listener,
    ):
        listener.json_on(tide)  # sent after the tower's SUBSCRIBE to commands: it hears them
        ok = runner.invoke(
            main,
            ["gm", "setup", "weight_a=6", "weight_b=12", "size=battle", "footing=severe-a", *where],
        )
        assert ok.exit_code == 0, ok.output
        assert ok.output == "Set up the Tide afresh; the marker stands at 6.\n"
        assert (publisher.table.bar().high, publisher.table.bar().position) == (17, 6)
        refused = runner.invoke(main, ["gm", "setup", "weight_a=0", "--json", *where])
        assert refused.exit_code == 1
        assert json.loads(refused.output)["error"]["field"] == "weight_a"
        said = runner.invoke(main, ["gm", "setup", "weight_a=0", *where])
        assert said.exit_code == 1 and said.output.startswith("The tower refused setup: weight_a")
        assert publisher.table.bar().position == 6
        assert runner.invoke(main, ["gm", "setup", "weight_a", *where]).exit_code == 2


def test_gm_declares_a_reply_to_the_last_opening_roll(mosquitto: Mosquitto, tmp_path: Path) -> None:
    settings = mosquitto.settings()
    where = ["--broker", f"127.0.0.1:{mosquitto.port}", "--table", settings.table]
    where += ["--timeout", str(WAIT)]
    runner = CliRunner()
    with TablePublisher(Table(tmp_path / "s.db"), settings) as publisher:
        table = publisher.table
        table.declare(RollContext(actor="Zhao", side="a", mode="tide"))
        opening = table.record(Roll((Die(DieKind.D6, 6), Die(DieKind.D6, 5))))
        table.declare(RollContext(actor="Wei", mode="unopposed"))
        table.record(Roll((Die(DieKind.D8, 2),)))  # no opening: passed over
        with Listener(settings, publisher.topics.session) as listener:
            listener.json_on(publisher.topics.session, lambda b: len(b["history"]) == 2)
        reply = runner.invoke(
            main, ["gm", "declare", "actor=Mongols", "side=b", "reply_to=last", *where]
        )
        assert reply.exit_code == 0, reply.output
        assert table.state.declared.reply_to == opening.id
        assert reply.output == (
            f"Declared the next roll: Mongols for side B, replying to roll {opening.id}; "
            "the marker stands at 8.\n"
        )
        own = ["actor=Kim", "side=a", "pool=3", "tier=d8", "tide_linked=true"]
        linked = runner.invoke(main, ["gm", "declare", *own, *where])
        assert linked.exit_code == 0, linked.output
        assert table.state.declared.params == {"tier": "d8", "tide_linked": True}
        assert linked.output.startswith(
            "Declared the next roll: Kim for side A, pool 3, Tier d8, Tide-linked;"
        )


def test_gm_sets_up_a_d6_pool_table_and_declares_its_own_fields(
    mosquitto: Mosquitto, tmp_path: Path
) -> None:
    settings = mosquitto.settings()
    where = ["--broker", f"127.0.0.1:{mosquitto.port}", "--table", settings.table]
    where += ["--timeout", str(WAIT)]
    runner = CliRunner()
    table = Table(tmp_path / "s.db")
    table.switch_system("d6-pool", {})
    with TablePublisher(table, settings) as publisher:
        with Listener(settings, publisher.topics.tide) as listener:
            listener.json_on(publisher.topics.tide)  # the tower hears commands by now
        done = runner.invoke(main, ["gm", "setup", *where])
        assert done.exit_code == 0, done.output
        assert done.output.startswith("Set up ") and "afresh" in done.output
        body = ["mode=new-clock", "clock=Alarm", "size=4"]
        declared = runner.invoke(main, ["gm", "declare", *body, *where])
        assert declared.exit_code == 0, declared.output
        assert table.state.declared.params == {"clock": "Alarm", "size": 4}
        refused = runner.invoke(main, ["gm", "setup", "nonsense=1", *where])
        assert refused.exit_code == 1 and "nonsense" in refused.output


def _lan_tower(tmp_path: Path) -> tuple[MqttSettings, list[str]]:
    """A LAN table's settings (its broker on loopback only) and `--broker` for them."""
    settings = MqttSettings(port=free_port(), ws_port=free_port(), lan=True, bind="127.0.0.1")
    return settings, ["--broker", f"127.0.0.1:{settings.port}", "--timeout", str(WAIT)]


def _heard(settings: MqttSettings) -> None:
    """Return once the tower's retained Tide is out: it is subscribed to its commands."""
    guest = settings.model_copy(update={"host": "127.0.0.1"})
    with Listener(guest, Topics.of(settings).tide) as listener:
        listener.json_on(Topics.of(settings).tide)


def test_gm_signs_in_with_the_token_on_a_lan_table(tmp_path: Path) -> None:
    """Issue 27 (2): `--token-file`, `$TIDETOWER_GM_TOKEN`, or a `lan` config's own token
    file beside its store: each moves the Tide of a LAN tower."""
    settings, where = _lan_tower(tmp_path)
    config = tmp_path / "tower.toml"
    config.write_text(
        f'[table]\nstore = "{tmp_path / "s.db"}"\n[mqtt]\nlan = true\nbind = "127.0.0.1"\n'
        f"port = {settings.port}\nws_port = {settings.ws_port}\n"
    )
    runner = CliRunner()
    with table_link(Table(tmp_path / "s.db"), settings) as publisher:
        _heard(settings)
        token_file = tmp_path / "gm-token"
        token = token_file.read_text().strip()
        by_file = ["gm", "setup", "weight_a=4", "--token-file", str(token_file), *where]
        ok = runner.invoke(main, by_file)
        assert ok.exit_code == 0, ok.output
        assert publisher.table.bar().position == 4
        by_env = runner.invoke(main, ["gm", "setup", "weight_a=5", *where], env={TOKEN_ENV: token})
        assert by_env.exit_code == 0, by_env.output
        assert publisher.table.bar().position == 5
        timeout = ["--timeout", str(WAIT)]
        by_config = runner.invoke(
            main, ["gm", "setup", "weight_a=6", "--config", str(config), *timeout]
        )
        assert by_config.exit_code == 0, by_config.output
        assert publisher.table.bar().position == 6
        assert all(token not in r.output for r in (ok, by_env, by_config))


def test_gm_without_the_token_or_with_a_wrong_one_is_told_so_in_one_line(tmp_path: Path) -> None:
    settings, where = _lan_tower(tmp_path)
    runner = CliRunner()
    (tmp_path / "guess").write_text("aaaa-bbbb-cccc\n")
    (tmp_path / "guess").chmod(0o600)  # a wrong token, not one others can read
    with table_link(Table(tmp_path / "s.db"), settings) as publisher:
        _heard(settings)
        # the tower is online, so no reply to a guest means the broker dropped its command
        guest = runner.invoke(main, ["gm", "setup", "weight_a=3", *where[:2], "--timeout", "2"])
        assert guest.exit_code == 1
        assert guest.output == f"Error: {NEEDS_TOKEN}\n"
        guess = runner.invoke(main, ["gm", "undo", "--token-file", str(tmp_path / "guess"), *where])
        assert guess.exit_code == 1
        assert guess.output.startswith("Error: refused: the broker at 127.0.0.1:")
        assert "does not accept the GM's token" in guess.output and "aaaa" not in guess.output
        assert len(guess.output.splitlines()) == 1
        token = ["--token-file", str(tmp_path / "gm-token")]
        assert runner.invoke(main, ["gm", "setup", "weight_a=4", *token, *where]).exit_code == 0
        # answered after the guest's was sent: had that reached the tower, it came first
        assert publisher.table.bar().position == 4


def test_dice_are_typed_as_for_session_roll() -> None:
    dice = [{"kind": "d6", "value": v} for v in (5, 3, 1)] + [{"kind": "d20", "value": 13}]
    assert parse_fields(("d6=5,3,1", "d20=13")) == {"dice": dice}
    assert parse_fields(("dice=d6=5,3,1 d20=13",)) == {"dice": dice}
    assert parse_fields(('dice=[{"kind": "d6", "value": 5}]',)) == {"dice": dice[:1]}
    with pytest.raises(click.BadParameter, match="not a face number"):
        parse_fields(("d6=5,x",))


def test_gm_roll_with_typed_dice_reaches_the_tower(mosquitto: Mosquitto, tmp_path: Path) -> None:
    settings = mosquitto.settings()
    where = ["--broker", f"127.0.0.1:{mosquitto.port}", "--table", settings.table]
    tide = Topics.of(settings).tide
    with (
        TablePublisher(Table(tmp_path / "s.db"), settings) as publisher,
        Listener(settings, tide) as listener,
    ):
        listener.json_on(tide)  # sent after the tower's SUBSCRIBE to commands: it hears them
        CliRunner().invoke(main, ["gm", "declare", "actor=Kim", "side=a", *where])
        rolled = CliRunner().invoke(
            main, ["gm", "roll", "d6=5,3,1", "d20=13", "--timeout", str(WAIT), *where]
        )
        assert rolled.exit_code == 0, rolled.output
        (record,) = publisher.table.state.history
        assert sorted(d.face for d in record.roll.dice) == [1, 3, 5, 13]


class Learning:
    """A tower's learner with corrections to learn from; counts the learnings started."""

    def __init__(self) -> None:
        self.started = 0

    def learn(self) -> int:
        self.started += 1
        return 7


def test_gm_learn_starts_learning_on_the_tower(mosquitto: Mosquitto, tmp_path: Path) -> None:
    """Issue 28 (3): `cmd/learn` was on the wire and had its sentence, yet click refused it."""
    settings = mosquitto.settings()
    where = ["--broker", f"127.0.0.1:{mosquitto.port}", "--table", settings.table]
    tide = Topics.of(settings).tide
    learner = Learning()
    with (
        TablePublisher(Table(tmp_path / "s.db"), settings, learner=learner),
        Listener(settings, tide) as listener,
    ):
        listener.json_on(tide)  # sent after the tower's SUBSCRIBE to commands: it hears them
        said = CliRunner().invoke(main, ["gm", "learn", "--timeout", str(WAIT), *where])
    assert said.exit_code == 0, said.output
    assert said.output == "Learning from 7 corrections.\n"
    assert learner.started == 1

"""The channels file: TOML and YAML, secrets from the environment and never shown, and
a bad file refused with one message that says where and what is expected, whatever
the file holds."""

from __future__ import annotations

import string
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from satchel import SatchelUsageError
from satchel.builtin import BlueskyEndpoint, DiscordEndpoint, WebhookEndpoint
from satchel.channels import ChannelConfig, channel_endpoints, load_channels, parse_channels

ENV = {
    "SATCHEL_DISCORD_TOKEN": "discord-secret-token",
    "SATCHEL_BLUESKY_HANDLE": "me.bsky.social",
    "SATCHEL_BLUESKY_APP_PASSWORD": "bsky-secret-pass",
    "HOOK_TOKEN": "Bearer hook-secret",
}
FULL_TOML = """
announce_consent = true

[groups]
team = ["ada", "bob"]

[discord]
channels = { general = "111", ops = 222 }
allow_mentions = false

[discord.delivery]
attempts = 4
max_wait = 20
rate = { requests = 5, per = 5 }

[bluesky]
service = "https://pds.example.com"
langs = ["en", "pt-BR"]

[webhook]
allowed_urls = ["https://hooks.example.com/satchel/"]
headers = { Authorization = "${HOOK_TOKEN}" }
"""
FULL_YAML = """
groups:
  team: [ada, bob]
discord:
  channels:
    general: "111"
    ops: 222
  delivery:
    attempts: 4
    max_wait: 20
    rate: {requests: 5, per: 5}
bluesky:
  service: https://pds.example.com
  langs: [en, pt-BR]
webhook:
  allowed_urls: ["https://hooks.example.com/satchel/"]
  headers: {Authorization: "${HOOK_TOKEN}"}
"""
SECRETS = ("discord-secret-token", "bsky-secret-pass", "hook-secret")


@pytest.mark.parametrize(("name", "text"), [("c.toml", FULL_TOML), ("c.yaml", FULL_YAML)])
def test_a_full_file_configures_every_channel_with_secrets_from_the_environment(
    tmp_path: Path, name: str, text: str
) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")

    config = load_channels(path, environ=ENV)
    endpoints = channel_endpoints(config)

    assert config.target_types() == ("user", "agent", "group", "discord", "bluesky", "webhook")
    assert config.groups == {"team": ["ada", "bob"]}
    assert config.discord is not None
    assert config.discord.channels == {"general": "111", "ops": "222"}
    assert config.discord.token.get_secret_value() == "discord-secret-token"
    assert config.discord.delivery.attempts == 4
    assert config.bluesky is not None
    assert config.bluesky.handle == "me.bsky.social"
    assert config.webhook is not None
    assert config.webhook.headers["Authorization"].get_secret_value() == "Bearer hook-secret"
    discord = endpoints["discord"]
    assert isinstance(discord, DiscordEndpoint)
    assert discord.channels == {"general": "111", "ops": "222"}
    assert discord.delivery.rate is not None
    assert (discord.delivery.rate.requests, discord.delivery.rate.per) == (5, 5.0)
    assert isinstance(endpoints["bluesky"], BlueskyEndpoint)
    assert isinstance(endpoints["webhook"], WebhookEndpoint)
    shown = f"{config!r} {config} {config.model_dump()} {config.model_dump_json()} {endpoints!r}"
    for secret in SECRETS:
        assert secret not in shown


def test_no_file_and_no_environment_means_no_channels() -> None:
    config = load_channels(environ={})

    assert config == ChannelConfig()
    assert config.target_types() == ("user", "agent", "group")
    assert channel_endpoints(config) == {}


def test_the_file_can_be_named_by_satchel_channels(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text('[discord]\nchannels = { a = "1" }\n', encoding="utf-8")

    config = load_channels(environ={**ENV, "SATCHEL_CHANNELS": str(path)})

    assert config.target_types()[-1] == "discord"


def test_a_secret_in_the_file_wins_over_the_environment() -> None:
    config = parse_channels('[discord]\ntoken = "from-file"\nchannels = { a = "1" }\n', environ=ENV)

    assert config.discord is not None
    assert config.discord.token.get_secret_value() == "from-file"


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("[bluesky]\n", ["bluesky.handle is missing", "SATCHEL_BLUESKY_HANDLE"]),
        ("[discord\n", ["not valid TOML", "line 1"]),
        ("[discord]\nchannels = {}\n", ["discord.channels (line 2)", "at least 1"]),
        (
            "[discord]\nchannels = { a = 'x1' }\n",
            ["discord.channels.a (line 2)", "Discord channel id"],
        ),
        ("[discrod]\n", ["discrod (line 1)", "not a known setting"]),
        (
            "[webhook]\nallowed_urls = ['ftp://x']\n",
            ["webhook.allowed_urls.0", "http:// or https://"],
        ),
        ("[webhook]\nallowed_urls = []\n", ["webhook.allowed_urls (line 2)", "at least 1"]),
        (
            "[discord]\nchannels = { a = '1' }\n[discord.delivery]\nattempts = 0\n",
            ["discord.delivery.attempts (line 4)", "greater than or equal to 1"],
        ),
        ("[webhook]\nallowed_urls = ['${NOPE}']\n", ["webhook.allowed_urls.0", "NOPE is not set"]),
    ],
)
def test_a_bad_file_says_where_and_what_is_expected(text: str, words: list[str]) -> None:
    env = {"SATCHEL_DISCORD_TOKEN": "discord-secret-token"}
    with pytest.raises(SatchelUsageError) as raised:
        parse_channels(text, source="channels.toml", environ=env)

    message = raised.value.message
    assert message.startswith("channels.toml")
    assert "\n" not in message
    for word in words:
        assert word in message
    assert "discord-secret-token" not in message


def test_a_missing_secret_names_its_environment_variable() -> None:
    with pytest.raises(SatchelUsageError) as raised:
        parse_channels("[discord]\nchannels = { a = '1' }\n", source="c.toml", environ={})

    assert raised.value.message == (
        "c.toml: discord.token is missing: set it in the file, or set the environment "
        "variable SATCHEL_DISCORD_TOKEN."
    )


def test_yaml_errors_give_the_line(tmp_path: Path) -> None:
    path = tmp_path / "c.yml"
    path.write_text("discord:\n  channels: [1\n", encoding="utf-8")
    listed = tmp_path / "l.yaml"
    listed.write_text("- discord\n", encoding="utf-8")

    with pytest.raises(SatchelUsageError, match=r"not valid YAML at line 3"):
        load_channels(path, environ=ENV)
    with pytest.raises(SatchelUsageError, match="expected a mapping of sections"):
        load_channels(listed, environ=ENV)


def test_an_unreadable_or_binary_file_is_a_usage_error(tmp_path: Path) -> None:
    binary = tmp_path / "c.toml"
    binary.write_bytes(b"\xff\xfe[discord]")

    with pytest.raises(SatchelUsageError, match="Cannot read the channels file"):
        load_channels(tmp_path / "missing.toml", environ=ENV)
    with pytest.raises(SatchelUsageError, match="not UTF-8"):
        load_channels(binary, environ=ENV)


# --- whatever the file holds -----------------------------------------------------------

_keys = st.sampled_from(
    ["discord", "bluesky", "webhook", "groups", "channels", "token", "handle", "app_password",
     "allowed_urls", "headers", "delivery", "attempts", "rate", "requests", "per", "base_url",
     "announce_consent", "general", "x"]
)  # fmt: skip
_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30),
    st.sampled_from(["111", "https://hooks.example.com/", "${HOOK_TOKEN}", "${UNSET}", "en"]),
)
_values: st.SearchStrategy[Any] = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(_keys | st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
_documents = st.dictionaries(_keys, _values, max_size=5)


def _outcome(text: str, source: str, *, yaml_text: bool) -> ChannelConfig | str:
    """The configuration, or the message of the usage error it was refused with."""
    try:
        return parse_channels(text, source=source, yaml_text=yaml_text, environ=ENV)
    except SatchelUsageError as exc:
        return exc.message


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(document=_documents)
def test_any_yaml_document_loads_or_is_one_clear_usage_error(document: dict[str, Any]) -> None:
    outcome = _outcome(yaml.safe_dump(document, allow_unicode=True), "c.yaml", yaml_text=True)

    if isinstance(outcome, str):
        assert outcome.startswith("c.yaml")
        assert "\n" not in outcome
        assert not any(secret in outcome for secret in SECRETS)
    else:
        assert set(outcome.target_types()) >= {"user", "agent", "group"}


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet=string.printable + "é{}[]=\"'\n", max_size=200))
def test_any_text_as_toml_loads_or_is_one_usage_error(text: str) -> None:
    outcome = _outcome(text, "c.toml", yaml_text=False)

    if isinstance(outcome, str):
        assert outcome.startswith("c.toml")
    else:
        assert isinstance(tomllib.loads(text), dict)  # only valid TOML gets through


def test_a_url_setting_read_from_a_secret_variable_is_refused_without_quoting_it() -> None:
    text = yaml.safe_dump(
        {"discord": {"channels": {"general": "111"}, "base_url": "${HOOK_TOKEN}"}}
    )
    outcome = _outcome(text, "c.yaml", yaml_text=True)
    assert isinstance(outcome, str)
    assert "discord.base_url" in outcome
    assert "expected an http:// or https:// URL" in outcome
    assert not any(secret in outcome for secret in SECRETS)

"""The eras as objects (`_engine/eras.py`): each revision a server speaks belongs to one era, whose wire rules
(`EraRules`, what the floors below the engine read) are the era's own, so that the engine's `Era` and the rules the
asking reads cannot tell two stories. The behaviour of each era is shown by the protocol tests (`tests/protocol/`,
`tests/tasks/`), through the client."""

from __future__ import annotations

from toolkit._engine.eras import ERAS, HANDSHAKE, STATELESS, STATELESS_VERSIONS, era_of, stamps
from toolkit._protocol.meta import SERVER_INFO_KEY
from toolkit._protocol.revisions import ERA_RULES, rules_of
from toolkit._protocol.types import HANDSHAKE_VERSIONS, MODERN_VERSION


def test_every_revision_belongs_to_one_era_and_its_rules_are_that_eras() -> None:
    revisions = [*HANDSHAKE_VERSIONS, MODERN_VERSION]
    owners = {version: [era for era in ERAS if version in era.versions] for version in revisions}
    assert owners == {version: [era_of(version)] for version in revisions}
    assert all(rules_of(version) is era_of(version).rules for version in revisions)
    assert [era.rules for era in ERAS] == list(ERA_RULES)
    assert all(era.versions == era.rules.versions and era.stateless == era.rules.stateless for era in ERAS)


def test_the_stateless_revisions_are_those_a_request_may_name_and_the_handshake_ones_are_not() -> None:
    assert STATELESS_VERSIONS == (MODERN_VERSION,)
    assert HANDSHAKE.versions == HANDSHAKE_VERSIONS
    assert not set(STATELESS_VERSIONS) & set(HANDSHAKE.versions)
    assert STATELESS.stateless
    assert not HANDSHAKE.stateless


def test_a_stamp_carries_the_server_info_of_its_eras_newest_revision() -> None:
    infos = {"2025-11-25": {"name": "s", "version": "1", "title": "S"}, MODERN_VERSION: {"name": "s", "version": "1"}}
    made = stamps(infos.__getitem__)
    assert {era: stamp.info for era, stamp in made.items()} == {
        HANDSHAKE: infos["2025-11-25"],
        STATELESS: infos[MODERN_VERSION],
    }
    assert made[STATELESS].complete({"content": []}) == {
        "content": [],
        "resultType": "complete",
        "_meta": {SERVER_INFO_KEY: infos[MODERN_VERSION]},
    }
    assert made[HANDSHAKE].complete({"content": []}) == {"content": []}
    assert made[HANDSHAKE].list_end(1000, "public") == "}"

"""The replay rule of 2026-07-28 multi-round-trip calls, round by round, and the requestState around it."""

from __future__ import annotations

import functools
from typing import Any

import pytest

from toolkit import ProtocolError
from toolkit._asking.mrtr import Replay, Suspend, bind_for, input_required, open_round
from toolkit._seal import Sealer

SEALER = Sealer([b"k" * 32], b"toolkit/request-state/v1")
BIND = bind_for("demo", "book", {"n": 1})
ASK_A = {"message": "A?"}
ASK_B = {"message": "B?"}


def run_round(replay: Replay, body: list[str]) -> list[Any]:
    """A tool body: asks each question in turn (a side effect between them is the caller's count)."""
    answers = []
    for message in body:
        answers.append(replay.answer("elicitation", "elicitation/create", {"message": message}))
    return answers


def retry(result: dict[str, Any], answers: dict[str, Any]) -> Replay:
    replay = open_round(
        SEALER, {"inputResponses": answers, "requestState": result["requestState"]}, lambda: BIND, 1 << 20
    )
    assert replay is not None
    return replay


def test_two_questions_take_three_rounds_and_earlier_answers_ride_the_state() -> None:
    first = Replay()
    with pytest.raises(Suspend):
        run_round(first, ["A?", "B?"])
    result = input_required(first, SEALER, BIND, 60)
    assert result["inputRequests"] == {"elicitation1": {"method": "elicitation/create", "params": ASK_A}}
    second = retry(result, {"elicitation1": {"action": "accept"}})
    with pytest.raises(Suspend):
        run_round(second, ["A?", "B?"])
    result = input_required(second, SEALER, BIND, 60)
    assert list(result["inputRequests"]) == ["elicitation2"]
    # The SDK's driver sends only this round's answers: the first one comes back from the state.
    third = retry(result, {"elicitation2": {"action": "decline"}})
    assert run_round(third, ["A?", "B?"]) == [{"action": "accept"}, {"action": "decline"}]


def test_a_changed_question_is_asked_again() -> None:
    first = Replay()
    with pytest.raises(Suspend):
        run_round(first, ["A?"])
    second = retry(input_required(first, SEALER, BIND, 60), {"elicitation1": {"action": "accept"}})
    with pytest.raises(Suspend):
        run_round(second, ["A?", "B?"])
    state = input_required(second, SEALER, BIND, 60)
    third = retry(state, {"elicitation2": {"action": "accept"}})
    with pytest.raises(Suspend):
        run_round(third, ["A changed?", "B?"])  # a redeploy reworded the first question
    assert list(third.pending) == ["elicitation1"]


def test_without_a_state_an_answer_for_a_matching_key_is_taken_and_extra_keys_ignored() -> None:
    replay = open_round(
        SEALER, {"inputResponses": {"elicitation1": {"action": "accept"}, "other": 1}}, lambda: BIND, 1 << 20
    )
    assert replay is not None
    assert run_round(replay, ["A?"]) == [{"action": "accept"}]


def test_with_a_state_only_answers_to_what_it_asked_count() -> None:
    first = Replay()
    with pytest.raises(Suspend):
        run_round(first, ["A?"])
    result = input_required(first, SEALER, BIND, 60)
    second = retry(result, {"elicitation1": {"action": "accept"}, "elicitation2": {"action": "accept"}})
    with pytest.raises(Suspend):
        run_round(second, ["A?", "B?"])  # B was never asked: its early answer is not taken
    assert list(second.pending) == ["elicitation2"]


def test_a_missing_answer_asks_again_instead_of_failing() -> None:
    first = Replay()
    with pytest.raises(Suspend):
        run_round(first, ["A?"])
    second = retry(input_required(first, SEALER, BIND, 60), {"wrong_key": {"action": "accept"}})
    with pytest.raises(Suspend):
        run_round(second, ["A?"])
    assert list(second.pending) == ["elicitation1"]


def test_explicit_keys_and_duplicates() -> None:
    replay = Replay(responses={"user_name": {"action": "accept", "content": {"name": "Ada"}}})
    assert replay.answer("elicitation", "elicitation/create", ASK_A, "user_name")["content"] == {"name": "Ada"}
    with pytest.raises(RuntimeError, match="user_name"):
        replay.answer("elicitation", "elicitation/create", ASK_B, "user_name")


@pytest.mark.parametrize(
    "params",
    [
        {"inputResponses": None},
        {"inputResponses": [1]},
        {"requestState": "v1.x.y.z"},
        {"requestState": 5},
    ],
)
def test_bad_input_responses_and_states_are_invalid_params(params: dict[str, Any]) -> None:
    with pytest.raises(ProtocolError) as caught:
        open_round(SEALER, params, lambda: BIND, 1 << 20)
    assert caught.value.code == -32602


def test_a_state_for_other_arguments_or_another_server_is_refused() -> None:
    first = Replay()
    with pytest.raises(Suspend):
        run_round(first, ["A?"])
    token = input_required(first, SEALER, BIND, 60)["requestState"]
    for bind in (bind_for("demo", "book", {"n": 2}), bind_for("other", "book", {"n": 1})):
        with pytest.raises(ProtocolError) as caught:
            open_round(SEALER, {"requestState": token}, functools.partial(dict, bind), 1 << 20)
        assert caught.value.data == {"reason": "invalid_request_state", "detail": "mismatch"}


def test_a_call_without_mrtr_params_needs_no_replay() -> None:
    assert open_round(SEALER, {"name": "book"}, lambda: BIND, 1 << 20) is None

"""A run's one outcome: the worst thing that happened wins, each has its own exit code."""

from __future__ import annotations

from elastic_channels.results.outcome import EXIT_CODES, Interrupt, decide, outcome_of

HELD = {"held": True, "text": "errors 0 is within its max 0"}
NOT_HELD = {"held": False, "text": "pct_of_target 64 is under its min 95"}


def test_every_outcome_has_its_own_exit_code() -> None:
    assert len(set(EXIT_CODES.values())) == len(EXIT_CODES)
    assert EXIT_CODES["passed"] == 0 and EXIT_CODES["interrupted"] == 105
    assert EXIT_CODES["thresholds_failed"] == 99


def test_a_clean_run_passes() -> None:
    outcome = decide(thresholds=[HELD])
    assert outcome.name == "passed" and outcome.exit_code == 0 and outcome.reasons == ()
    assert outcome.headline("r1") == "run r1: PASSED (exit 0)"


def test_an_interrupt_wins_over_thresholds_that_held() -> None:
    outcome = decide(interrupt=Interrupt("SIGINT", 55.2, 80), thresholds=[HELD])
    assert outcome.name == "interrupted" and outcome.exit_code == 105
    assert outcome.reasons == ("stopped by SIGINT at 55.2 s of 80 s (69%)",)


def test_the_worst_first_and_every_reason_kept() -> None:
    failed = [{"worker_id": 1, "how": "killed by SIGKILL", "at_s": 14.0, "loss": "lost unknown"}]
    outcome = decide(failed_workers=failed, loss=["12 acked rows never landed"],
                     thresholds=[NOT_HELD])  # fmt: skip
    assert outcome.name == "workers_failed" and outcome.exit_code == 1
    assert outcome.reasons == (
        "worker 1 killed by SIGKILL at 14.0 s (lost unknown)",
        "12 acked rows never landed",
        "threshold not held: pct_of_target 64 is under its min 95",
    )


def test_thresholds_that_cannot_be_checked_fail() -> None:
    outcome = decide(thresholds_error="thresholds.nope: unknown figure")
    assert outcome.name == "thresholds_failed" and outcome.exit_code == 99


def test_a_signal_before_sending_started_says_so() -> None:
    assert Interrupt("SIGTERM", None, 20).text() == "SIGTERM before sending started"
    assert Interrupt("SIGTERM", -2.5, 20).text() == "SIGTERM 2.5 s before sending started"


def test_a_result_recorded_before_outcomes_is_unknown() -> None:
    assert outcome_of({"thresholds_held": True})["outcome"] == "unknown"
    recorded = {"outcome": {"outcome": "rows_lost", "exit_code": 3, "reasons": ["x"]}}
    assert outcome_of(recorded) == {"outcome": "rows_lost", "exit_code": 3, "reasons": ["x"]}


def test_a_run_that_sent_nothing_does_not_pass() -> None:
    outcome = decide(thresholds=[HELD], rows_sent=0)
    assert outcome.name == "workers_failed"
    assert outcome.reasons[0] == "no worker sent a row after warmup"
    assert decide(thresholds=[HELD], rows_sent=None).passed

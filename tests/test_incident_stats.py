"""The statistics labs 04–06 read from an incident, checked against independent counts of the same run:
the request log against the ledger, the ledger's conservation, the controller's timeline."""

import numpy as np
import pandas as pd
import pytest

from kafka_lab.incident_stats import (
    CACHE_SIZE,
    cached_run,
    controller_requests,
    follower_fetches,
    incident_summary,
    leader_and_isr_wait_ms,
    leadership,
    metric_peak,
    partition_ledger,
    queue_ahead,
    truncated_acks,
    truncated_records,
    wrong_leader_answers,
)
from kafka_lab.sim import OUTCOMES, purgatory_incident, truncation_incident, unavailability_incident

SMALL = {"producers": 60, "burst": 1, "rate_per_s": 20, "partitions": 4, "until_ms": 120.0}


@pytest.fixture(scope="module", params=[False, True], ids=["no-cp", "cp"])
def trunc(request):
    return cached_run(truncation_incident, control_plane=request.param, **SMALL)


def test_controller_requests_are_the_request_log_rows(trunc):
    c = controller_requests(trunc)
    r = trunc.requests[trunc.requests["api"].isin(["LeaderAndIsr", "UpdateMetadata"])]
    assert len(c) == len(r) == 6  # one LeaderAndIsr and one UpdateMetadata per broker
    assert np.allclose(c["waited_ms"], (r["socketWaitTime"] + r["requestQueueTime"]).to_numpy())
    assert leader_and_isr_wait_ms(trunc, 1) == pytest.approx(
        float(c.loc[(c["broker_id"] == 1) & (c["api"] == "LeaderAndIsr"), "waited_ms"].iloc[0])
    )
    with pytest.raises(ValueError, match="broker 7"):
        leader_and_isr_wait_ms(trunc, 7)


def test_partition_ledger_conserves_records_and_counts_refusals(trunc):
    per = partition_ledger(trunc)
    assert per["records"].sum() == trunc.ledger["records"].sum()
    assert (per[list(OUTCOMES)].sum(axis=1) == per["records"]).all()
    assert per.set_index("partition")["truncated"].sum() == truncated_records(trunc)
    # two independent counts of the NOT_LEADER_OR_FOLLOWER answers: per batch (ledger) and per request (log);
    # only orders-0 moves, so every refused request refused exactly one batch
    assert per["not_leader_answers"].sum() == len(wrong_leader_answers(trunc))
    assert (per.loc[per["partition"] != 0, "not_leader_answers"] == 0).all()


def test_truncated_acks_are_the_truncated_batches(trunc):
    acks = truncated_acks(trunc)
    assert acks["records"].sum() == truncated_records(trunc, 0)
    if len(acks):  # acknowledged by the old leader before it applied its LeaderAndIsr, never fetched by the new
        s = incident_summary(trunc)
        assert acks["done_ms"].max() <= s["lai_applied_ms"][1] + 1.0
        assert (acks["broker_id"] == 1).all()
        # broker 1 truncates to where the new leader's log ended when it took over, and removes at least those
        became = trunc.events[(trunc.events["event"] == "become_leader") & (trunc.events["broker_id"] == 2)].iloc[0]
        gone = trunc.events[(trunc.events["event"] == "truncated") & (trunc.events["broker_id"] == 1)]
        assert gone["detail"].iloc[0]["offset"] == became["detail"]["leo"]
        assert gone["detail"].map(lambda d: d["removed_records"]).sum() >= acks["records"].sum()


def test_leadership_matches_the_unavailability_frame(trunc):
    lead = leadership(trunc)
    u = trunc.unavailability.iloc[0]
    old, new = lead.iloc[0], lead.iloc[1]
    assert (old["broker_id"], new["broker_id"]) == (1, 2)
    assert old["end_ms"] == pytest.approx(u["old_leader_stopped_ms"])
    assert new["start_ms"] == pytest.approx(u["new_leader_started_ms"])
    assert max(0.0, old["end_ms"] - new["start_ms"]) == pytest.approx(u["two_leaders_ms"])


def test_a_gap_in_leadership_is_unavailability():
    res = cached_run(unavailability_incident, control_plane={1: True, 2: False, 3: False}, **SMALL)
    lead = leadership(res)
    gap = lead.iloc[1]["start_ms"] - lead.iloc[0]["end_ms"]
    assert gap > 0 and gap == pytest.approx(incident_summary(res)["unavailable_ms"])


def test_queue_ahead_and_follower_fetches():
    res = cached_run(purgatory_incident, control_plane=False, **SMALL)
    ahead = queue_ahead(res, 1)
    assert ahead["requests"] == sum(ahead["by_api"].values()) > 0
    assert queue_ahead(res, 2)["requests"] == 0  # idle broker
    f = follower_fetches(res, 1)
    assert set(f["fetcher"]) == {"broker-2-fetcher-0", "broker-3-fetcher-0"}
    assert (f["waited_ms"] >= 0).all()


def test_metric_peak_and_errors():
    res = cached_run(purgatory_incident, control_plane=False, **SMALL)
    m = res.metrics
    assert metric_peak(res, "PurgatorySize", 1) == m.loc[m["broker_id"] == 1, "PurgatorySize"].max()
    with pytest.raises(ValueError, match="no metric 'Nope'"):
        metric_peak(res, "Nope", 1)
    with pytest.raises(TypeError, match="ClusterResults"):
        partition_ledger(pd.DataFrame())


def test_cached_run_is_the_same_run_and_bounded():
    a = cached_run(purgatory_incident, control_plane=False, **SMALL)
    assert cached_run(purgatory_incident, control_plane=False, **dict(reversed(list(SMALL.items())))) is a
    fresh = purgatory_incident(control_plane=False, **SMALL)
    assert fresh.ledger.equals(a.ledger)  # same seed, same result: the cache changes nothing but the time
    assert CACHE_SIZE >= 8

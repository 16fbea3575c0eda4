"""Properties: the fast assignment equals the Java transcription, and KIP-36's stated guarantees hold.

KIP-36, "Proposed Changes":
- partitions = N x brokers and every rack has the same broker count -> same leader count and the same
  replica count on every broker; different broker counts per rack -> still the same leader count;
- racks >= replicas -> each rack holds at most one replica of a partition;
- racks < replicas (or equal) -> each rack holds at least one replica.
"""

from collections import Counter

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_lab.assignment import (
    BrokerMetadata,
    assign_replicas_to_brokers,
    assign_replicas_to_brokers_reference,
)

INT_MAX = 2**31 - 1

rack_names = st.text(alphabet="ab1\u00e9\uff01\U0001f600", min_size=0, max_size=3)


@st.composite
def broker_sets(draw, allow_partial=True, allow_duplicates=True):
    n = draw(st.integers(1, 12))
    ids = draw(st.lists(st.integers(-5, 40), min_size=n, max_size=n, unique=not allow_duplicates))
    kind = draw(st.sampled_from(["none", "all", "partial"] if allow_partial else ["none", "all"]))
    racks = draw(st.lists(rack_names, min_size=1, max_size=5))
    out = []
    for i in ids:
        if kind == "none":
            out.append(BrokerMetadata(i))
        elif kind == "all" or draw(st.booleans()):
            out.append(BrokerMetadata(i, draw(st.sampled_from(racks))))
        else:
            out.append(BrokerMetadata(i))
    return out


def _outcome(fn, *args, **kw):
    try:
        return ("ok", fn(*args, **kw))
    except Exception as e:
        return ("raised", type(e).__name__, str(e))


@given(
    brokers=broker_sets(),
    n_partitions=st.integers(-2, 60),
    rf=st.integers(-1, 13),
    fixed=st.one_of(st.integers(0, 50), st.integers(INT_MAX - 60, INT_MAX)),
    start_pid=st.one_of(st.integers(-3, 100), st.integers(INT_MAX - 80, INT_MAX)),
)
def test_fast_equals_java_transcription(brokers, n_partitions, rf, fixed, start_pid):
    args = (brokers, n_partitions, rf, fixed, start_pid)
    assert _outcome(assign_replicas_to_brokers, *args) == _outcome(assign_replicas_to_brokers_reference, *args)


@settings(max_examples=30)
@given(
    n_racks=st.integers(1, 12),
    per_rack=st.integers(1, 30),
    rounds=st.integers(1, 25),
    rf=st.integers(1, 6),
    fixed=st.integers(0, 500),
    start_pid=st.integers(-1, 3000),
)
def test_fast_equals_java_transcription_larger(n_racks, per_rack, rounds, rf, fixed, start_pid):
    # larger clusters, uneven racks (broker i goes to rack i % n_racks, then a few more to rack 0)
    n = n_racks * per_rack
    brokers = [BrokerMetadata(i, f"r{i % n_racks}") for i in range(n)] + [
        BrokerMetadata(n + i, "r0") for i in range(per_rack // 3)
    ]
    rf = min(rf, len(brokers))
    for b in (brokers, [BrokerMetadata(x.id) for x in brokers]):
        args = (b, rounds * len(b) + 3, rf, fixed, start_pid)
        assert assign_replicas_to_brokers(*args) == assign_replicas_to_brokers_reference(*args)


@given(
    brokers=broker_sets(allow_partial=False, allow_duplicates=False),
    seed=st.integers(0, 2**32 - 1),
    n_partitions=st.integers(1, 30),
    rf=st.integers(1, 12),
)
def test_fast_equals_java_transcription_with_seeded_random_start(brokers, seed, n_partitions, rf):
    rf = min(rf, len(brokers))
    a = assign_replicas_to_brokers(brokers, n_partitions, rf, rng=np.random.default_rng(seed))
    b = assign_replicas_to_brokers_reference(brokers, n_partitions, rf, rng=np.random.default_rng(seed))
    assert a == b


@st.composite
def even_racks(draw):
    n_racks = draw(st.integers(1, 6))
    per_rack = draw(st.integers(1, 5))
    names = draw(st.lists(rack_names, min_size=n_racks, max_size=n_racks, unique=True))
    ids = draw(st.permutations(range(n_racks * per_rack)))
    return [BrokerMetadata(b, names[i % n_racks]) for i, b in enumerate(ids)], n_racks


@given(
    setup=even_racks(),
    multiple=st.integers(1, 5),
    rf_frac=st.floats(0, 1),
    fixed=st.integers(0, 100),
    seed=st.integers(0, 2**32 - 1),
    use_random=st.booleans(),
)
def test_kip36_even_racks_give_even_leaders_and_replicas(setup, multiple, rf_frac, fixed, seed, use_random):
    brokers, _ = setup
    n = len(brokers)
    rf = 1 + int(rf_frac * (n - 1))
    start = -1 if use_random else fixed
    a = assign_replicas_to_brokers(brokers, multiple * n, rf, start, rng=np.random.default_rng(seed))
    leaders = Counter(r[0] for r in a.values())
    replicas = Counter(b for r in a.values() for b in r)
    assert set(leaders) == set(replicas) == {b.id for b in brokers}
    assert set(leaders.values()) == {multiple}
    assert set(replicas.values()) == {multiple * rf}


@st.composite
def uneven_racks(draw):
    n = draw(st.integers(1, 15))
    n_racks = draw(st.integers(1, n))
    racks = [f"rack{i}" for i in range(n_racks)] + draw(
        st.lists(st.sampled_from([f"rack{i}" for i in range(n_racks)]), min_size=n - n_racks, max_size=n - n_racks)
    )
    ids = draw(st.permutations(range(n)))
    return [BrokerMetadata(b, r) for b, r in zip(ids, racks)], n_racks


@given(setup=uneven_racks(), multiple=st.integers(1, 4), rf_frac=st.floats(0, 1), fixed=st.integers(0, 100))
def test_kip36_uneven_racks_still_even_leaders(setup, multiple, rf_frac, fixed):
    brokers, _ = setup
    n = len(brokers)
    rf = 1 + int(rf_frac * (n - 1))
    a = assign_replicas_to_brokers(brokers, multiple * n, rf, fixed)
    leaders = Counter(r[0] for r in a.values())
    assert set(leaders) == {b.id for b in brokers} and set(leaders.values()) == {multiple}


@given(
    setup=uneven_racks(),
    n_partitions=st.integers(1, 40),
    rf_frac=st.floats(0, 1),
    fixed=st.integers(0, 100),
    start_pid=st.integers(-1, 200),
)
def test_kip36_rack_spread(setup, n_partitions, rf_frac, fixed, start_pid):
    brokers, n_racks = setup
    rack = {b.id: b.rack for b in brokers}
    rf = 1 + int(rf_frac * (len(brokers) - 1))
    a = assign_replicas_to_brokers(brokers, n_partitions, rf, fixed, start_pid)
    for replicas in a.values():
        assert len(set(replicas)) == rf  # never two replicas on one broker
        racks = Counter(rack[b] for b in replicas)
        if rf <= n_racks:
            assert max(racks.values()) == 1  # at most one replica per rack
        if rf >= n_racks:
            assert len(racks) == n_racks  # every rack holds at least one replica


@given(
    ids=st.lists(st.integers(0, 100), min_size=1, max_size=12, unique=True),
    rack=rack_names,
    n_partitions=st.integers(1, 40),
    rf_frac=st.floats(0, 1),
    fixed=st.integers(0, 100),
    start_pid=st.integers(-1, 50),
)
def test_one_rack_is_rack_unaware_over_sorted_ids(ids, rack, n_partitions, rf_frac, fixed, start_pid):
    rf = 1 + int(rf_frac * (len(ids) - 1))
    one_rack = [BrokerMetadata(i, rack) for i in ids]
    plain = [BrokerMetadata(i) for i in sorted(ids)]
    assert assign_replicas_to_brokers(one_rack, n_partitions, rf, fixed, start_pid) == assign_replicas_to_brokers(
        plain, n_partitions, rf, fixed, start_pid
    )

"""kafka_lab.assignment against KIP-36's worked examples, Kafka's own tests, and Kafka's messages.

Sources of the expected values:
- KIP-36's worked examples: the 6-broker / 3-rack list and its 12 partitions, and the uneven 3-broker example.
- Kafka's AdminRackAwareTest.testGetRackAlternatedBrokerListAndAssignReplicasToBrokers
  (core/src/test/scala/unit/kafka/admin/AdminRackAwareTest.scala) and AdminTest.testReplicaAssignment
  (core/src/test/scala/unit/kafka/admin/AdminTest.scala, 5 brokers, 10 partitions, RF 3, fixedStartIndex 0).
- Hand derivations from the loop in docs/kafka-reference.md §1 ("The loop") (shown in comments).
"""

import random

import numpy as np
import pytest

from kafka_lab.assignment import (
    AdminOperationException,
    ApiException,
    BrokerMetadata,
    InvalidPartitionsException,
    InvalidReplicaAssignmentException,
    InvalidReplicationFactorException,
    KafkaException,
    add_partitions,
    assign_for_topic,
    assign_replicas_to_brokers,
    assign_replicas_to_brokers_reference,
    broker_balance,
    brokers_from_racks,
    failure_impact,
    failure_summary,
    partition_racks,
    rack_alternated_broker_list,
    rack_alternated_steps,
    rack_balance,
    rack_failure_comparison,
    replica_table,
)

BOTH = [assign_replicas_to_brokers, assign_replicas_to_brokers_reference]

KIP_RACKS = {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}
KIP_12 = {
    0: [0, 3, 1],
    1: [3, 1, 5],
    2: [1, 5, 4],
    3: [5, 4, 2],
    4: [4, 2, 0],
    5: [2, 0, 3],
    6: [0, 4, 2],
    7: [3, 2, 0],
    8: [1, 0, 3],
    9: [5, 3, 1],
    10: [4, 1, 5],
    11: [2, 5, 4],
}
UNEVEN = {0: "rack1", 1: "rack2", 2: "rack2"}


# ---------------------------------------------------------------- KIP-36 worked examples


def test_kip36_rack_alternated_list():
    assert rack_alternated_broker_list(brokers_from_racks(KIP_RACKS)) == [0, 3, 1, 5, 4, 2]


@pytest.mark.parametrize("fn", BOTH)
def test_kip36_twelve_partitions_over_six_brokers_in_three_racks(fn):
    assert fn(brokers_from_racks(KIP_RACKS), 12, 3, 0) == KIP_12


@pytest.mark.parametrize("fn", BOTH)
def test_kip36_uneven_racks_penalize_broker_0(fn):
    brokers = brokers_from_racks(UNEVEN)
    assert rack_alternated_broker_list(brokers) == [0, 1, 2]
    a = fn(brokers, 3, 2, 0)
    assert a == {0: [0, 1], 1: [1, 0], 2: [2, 0]}
    bal = broker_balance(a, brokers)
    assert bal["leaders"].tolist() == [1, 1, 1]  # "the leaders for 3 partitions are evenly distributed"
    assert bal["replicas"].tolist() == [
        3,
        2,
        1,
    ]  # "Broker 0 has three replicas, broker 1 has two, and broker 2 only has one"


# ---------------------------------------------------------------- Kafka's own test cases


def test_kafka_admin_rack_aware_test_lists():
    # AdminRackAwareTest: getRackAlternatedBrokerList(rackMap - 5) == List(0, 3, 1, 4, 2)
    without_5 = {k: v for k, v in KIP_RACKS.items() if k != 5}
    assert rack_alternated_broker_list(without_5) == [0, 3, 1, 4, 2]


@pytest.mark.parametrize("fn", BOTH)
def test_kafka_admin_rack_aware_test_seven_partitions(fn):
    # AdminRackAwareTest: assignReplicasToBrokers(toBrokerMetadata(rackMap), 7, 3, 0, 0)
    expected = {p: KIP_12[p] for p in range(7)}
    assert fn(brokers_from_racks(KIP_RACKS), 7, 3, 0, 0) == expected


@pytest.mark.parametrize("fn", BOTH)
def test_kafka_admin_test_replica_assignment_rack_unaware(fn):
    # AdminTest.testReplicaAssignment: brokers 0..4 without racks, 10 partitions, RF 3, fixedStartIndex 0
    expected = {
        0: [0, 1, 2],
        1: [1, 2, 3],
        2: [2, 3, 4],
        3: [3, 4, 0],
        4: [4, 0, 1],
        5: [0, 2, 3],
        6: [1, 3, 4],
        7: [2, 4, 0],
        8: [3, 0, 1],
        9: [4, 1, 2],
    }
    assert fn([BrokerMetadata(i) for i in range(5)], 10, 3, 0) == expected


# ---------------------------------------------------------------- rack-unaware, derived by hand


@pytest.mark.parametrize("fn", BOTH)
def test_rack_unaware_three_brokers_by_hand(fn):
    # n = 3, start = shift = 0. p0..p2: shift 0, followers at first+1+(0+j)%2 -> [f, f+1, f+2].
    # p3 wraps (3 % 3 == 0): shift 1, followers at first+1+(1+j)%2 -> [f, f+2, f+1].
    expected = {0: [0, 1, 2], 1: [1, 2, 0], 2: [2, 0, 1], 3: [0, 2, 1], 4: [1, 0, 2], 5: [2, 1, 0]}
    assert fn([BrokerMetadata(i) for i in range(3)], 6, 3, 0) == expected


@pytest.mark.parametrize("fn", BOTH)
def test_rack_unaware_uses_the_order_given(fn):
    # the list is [2, 0, 1]: same positions as above, other ids
    brokers = [BrokerMetadata(2), BrokerMetadata(0), BrokerMetadata(1)]
    assert fn(brokers, 4, 2, 0) == {0: [2, 0], 1: [0, 1], 2: [1, 2], 3: [2, 1]}


@pytest.mark.parametrize("fn", BOTH)
def test_rack_unaware_fixed_start_index_larger_than_n(fn):
    # start = shift = 7 with n = 5: first = (p + 7) % 5, p0 -> 2; follower 1 + (7 + 0) % 4 = 4 -> (2+4) % 5 = 1
    a = fn([BrokerMetadata(i) for i in range(5)], 1, 2, 7)
    assert a == {0: [2, 1]}


@pytest.mark.parametrize("fn", BOTH)
def test_java_int_overflow_at_the_edge(fn):
    # start = shift = 2^31-1, n = 5: first = (2^31-1) % 5 = 2.
    # j=0: 1 + (2^31-1) % 4 = 4 -> (2+4) % 5 = 1;  j=1: (2^31-1)+1 wraps to -2^31, -2^31 % 4 = 0 -> 1 -> 3
    assert fn([BrokerMetadata(i) for i in range(5)], 1, 3, 2**31 - 1) == {0: [2, 1, 3]}
    # partition 1: p + startIndex wraps negative, -2^31 % 5 = -3 -> Kafka indexes the array at -3 and throws
    with pytest.raises(IndexError, match=r"^Index -3 out of bounds for length 5$"):
        fn([BrokerMetadata(i) for i in range(5)], 2, 3, 2**31 - 1)


# AdminTest.testReplicaAssignment's expected map (5 brokers, RF 3, fixedStartIndex 0), partitions 0..9
ADMIN_TEST_10 = {
    0: [0, 1, 2],
    1: [1, 2, 3],
    2: [2, 3, 4],
    3: [3, 4, 0],
    4: [4, 0, 1],
    5: [0, 2, 3],
    6: [1, 3, 4],
    7: [2, 4, 0],
    8: [3, 0, 1],
    9: [4, 1, 2],
}


@pytest.mark.parametrize("fn", BOTH)
def test_start_partition_id_keys_and_shift(fn):
    # startPartitionId 4: keys start at 4, and the shift follows the *absolute* id, so partitions 4..9
    # are AdminTest's own partitions 4..9 (a shift counted from the first new partition would bump at 9, not 5)
    tail = fn([BrokerMetadata(i) for i in range(5)], 6, 3, 0, 4)
    assert list(tail) == list(range(4, 10))
    assert tail == {p: ADMIN_TEST_10[p] for p in range(4, 10)}
    # startPartitionId -1 (the default) and any negative value mean 0
    assert fn([BrokerMetadata(i) for i in range(5)], 2, 3, 0, -7) == {0: [0, 1, 2], 1: [1, 2, 3]}


@pytest.mark.parametrize("fn", BOTH)
def test_rack_aware_k_is_not_reset_between_followers(fn):
    # 0 -> a, 1 -> b, 2 -> b, 3 -> b: list [0, 1, 2, 3], n = 4, numRacks = 2, start = shift = 0, RF 3.
    # Partition 2: leader = list[2] = broker 2 (rack b). Candidates are list[(2 + 1 + (0 + k) % 3) % 4]:
    #   k=0 -> broker 3 (rack b, used, not all racks used yet): skip;  k=1 -> broker 0 (rack a): take.
    #   Second follower: k goes on at 2 -> broker 1 (every rack used now, broker 1 unused): take -> [2, 0, 1].
    #   Restarting k at 0 would take broker 3 instead: [2, 0, 3].
    a = fn(brokers_from_racks({0: "a", 1: "b", 2: "b", 3: "b"}), 3, 3, 0)
    assert a[2] == [2, 0, 1]
    # Partition 0 by the same walk: leader 0 (a); k=0 -> broker 1 (b): take; k=1 -> broker 2: take.
    # Partition 1: leader 1 (b); k=0 -> broker 2 (b): skip; k=1 -> broker 3 (b): skip; k=2 -> broker 0 (a): take;
    #   k=3 -> (1 + 1 + 0) % 4 = 2 -> broker 2: take.
    assert a == {0: [0, 1, 2], 1: [1, 0, 2], 2: [2, 0, 1]}


# ---------------------------------------------------------------- the rack-alternated list


def test_rack_names_sort_as_java_strings():
    racks = {0: "rack2", 1: "rack10", 2: "rack1", 3: "rack2", 4: "rack10", 5: "rack1"}
    steps = rack_alternated_steps(racks)
    assert steps["rack"].tolist()[:3] == ["rack1", "rack10", "rack2"]
    assert rack_alternated_broker_list(racks) == [2, 1, 0, 5, 4, 3]


def test_java_sort_is_utf16_code_units_not_code_points():
    # U+1F600 is the surrogate pair D83D DE00, which sorts before U+FF01 in Java (but after it in Python)
    racks = {0: "\uff01", 1: "\U0001f600"}
    assert sorted(racks.values()) == ["\uff01", "\U0001f600"]
    assert rack_alternated_broker_list(racks) == [1, 0]


def test_empty_string_is_a_rack():
    assert rack_alternated_broker_list({0: "", 1: "a", 2: ""}) == [0, 1, 2]
    assert assign_replicas_to_brokers(brokers_from_racks({0: "", 1: "a", 2: ""}), 1, 2, 0) == {0: [0, 1]}


def test_racks_run_out_and_are_skipped():
    # rack a: 0,1,2,3; rack b: 4 -> a, b, a, a, a
    assert rack_alternated_broker_list({0: "a", 1: "a", 2: "a", 3: "a", 4: "b"}) == [0, 4, 1, 2, 3]


def test_rack_aware_ignores_input_order_rack_unaware_does_not():
    b = brokers_from_racks(KIP_RACKS)
    assert assign_replicas_to_brokers(list(reversed(b)), 12, 3, 0) == KIP_12
    plain = [BrokerMetadata(i) for i in range(6)]
    assert assign_replicas_to_brokers(plain, 6, 2, 0) != assign_replicas_to_brokers(plain[::-1], 6, 2, 0)


# ---------------------------------------------------------------- errors, messages, order


@pytest.mark.parametrize("fn", BOTH)
@pytest.mark.parametrize(
    "args, exc, msg",
    [
        ((0, 1), InvalidPartitionsException, "Number of partitions must be larger than 0."),
        ((-3, 0), InvalidPartitionsException, "Number of partitions must be larger than 0."),
        ((1, 0), InvalidReplicationFactorException, "Replication factor must be larger than 0."),
        ((1, -1), InvalidReplicationFactorException, "Replication factor must be larger than 0."),
        ((1, 4), InvalidReplicationFactorException, "Replication factor: 4 larger than available brokers: 3."),
    ],
)
def test_checks_and_messages(fn, args, exc, msg):
    for brokers in (
        [BrokerMetadata(i) for i in range(3)],
        brokers_from_racks(UNEVEN),
        [BrokerMetadata(0, "a"), BrokerMetadata(1), BrokerMetadata(2)],
    ):  # RF checks come first
        with pytest.raises(exc) as e:
            fn(brokers, *args, 0)
        assert str(e.value) == msg


@pytest.mark.parametrize("fn", BOTH)
def test_partial_racks_message(fn):
    brokers = [BrokerMetadata(0, "a"), BrokerMetadata(1), BrokerMetadata(2, "b")]
    with pytest.raises(AdminOperationException) as e:
        fn(brokers, 3, 2, 0)
    assert str(e.value) == "Not all brokers have rack information for replica rack aware assignment."


def test_exception_classes_follow_kafka_hierarchy():
    assert issubclass(InvalidPartitionsException, ApiException)
    assert issubclass(InvalidReplicationFactorException, ApiException)
    assert issubclass(ApiException, KafkaException) and issubclass(KafkaException, ValueError)
    assert issubclass(AdminOperationException, ValueError) and not issubclass(AdminOperationException, KafkaException)
    assert InvalidPartitionsException.java_class == "org.apache.kafka.common.errors.InvalidPartitionsException"
    assert AdminOperationException.java_class == "org.apache.kafka.server.common.AdminOperationException"


def test_no_brokers():
    with pytest.raises(
        InvalidReplicationFactorException, match=r"^Replication factor: 1 larger than available brokers: 0\.$"
    ):
        assign_replicas_to_brokers([], 1, 1, 0)


def test_bad_python_input_is_a_clear_error():
    with pytest.raises(TypeError, match="n_partitions must be an int"):
        assign_replicas_to_brokers([BrokerMetadata(0)], 1.5, 1)
    with pytest.raises(ValueError, match="outside Java's int range"):
        assign_replicas_to_brokers([BrokerMetadata(0)], 2**31, 1)
    with pytest.raises(TypeError, match=r"broker\.rack must be a string"):
        BrokerMetadata(0, 3)
    with pytest.raises(TypeError, match="rng must be"):
        assign_replicas_to_brokers([BrokerMetadata(0)], 1, 1, rng="seed")


# ---------------------------------------------------------------- random start: the seeded draws


@pytest.mark.parametrize("make", [lambda: np.random.default_rng(7), lambda: random.Random(7)])
def test_random_start_is_two_independent_draws(make):
    brokers = brokers_from_racks(KIP_RACKS)
    rng = make()
    n = 6
    draws = (
        (int(rng.integers(n)), int(rng.integers(n)))
        if isinstance(rng, np.random.Generator)
        else (rng.randrange(n), rng.randrange(n))
    )
    a = assign_replicas_to_brokers(brokers, 12, 3, rng=make())
    assert a == assign_replicas_to_brokers_reference(brokers, 12, 3, rng=make())
    assert a == assign_replicas_to_brokers(brokers, 12, 3, rng=make())  # same seed, same result
    start, shift = draws
    order = rack_alternated_broker_list(brokers)
    assert a[0][0] == order[start]
    # partition 0's first follower: walk from 1 + (shift * 3 + k) % 5 past the leader's rack
    assert a[0][1] == next(
        order[(start + 1 + (shift * 3 + k) % 5) % 6]
        for k in range(5)
        if KIP_RACKS[order[(start + 1 + (shift * 3 + k) % 5) % 6]] != KIP_RACKS[order[start]]
    )


def test_int_seed_is_a_numpy_seed():
    b = [BrokerMetadata(i) for i in range(7)]
    assert assign_replicas_to_brokers(b, 9, 3, rng=3) == assign_replicas_to_brokers(
        b, 9, 3, rng=np.random.default_rng(3)
    )


def test_unseeded_draws_vary():
    b = [BrokerMetadata(i) for i in range(50)]
    assert len({tuple(assign_replicas_to_brokers(b, 1, 2)[0]) for _ in range(30)}) > 1


# ---------------------------------------------------------------- what the tools do around it


def test_zk_enforced_partial_racks_message_comes_first():
    brokers = [BrokerMetadata(0, "a"), BrokerMetadata(1), BrokerMetadata(2, "b")]
    with pytest.raises(AdminOperationException) as e:
        assign_for_topic(brokers, 0, 5)  # even before the partition and RF checks
    assert str(e.value) == (
        "Not all brokers have rack information. Add --disable-rack-aware in command line"
        " to make replica assignment without rack information."
    )


def test_zk_disable_rack_aware_and_safe_fall_back_to_rack_unaware_on_sorted_ids():
    brokers = [BrokerMetadata(2, "b"), BrokerMetadata(0, "a"), BrokerMetadata(1)]
    plain = [BrokerMetadata(i) for i in range(3)]
    # rack-unaware over ids 0, 1, 2, start = shift = 0: p0..p2 followers at first + 1, p3..p5 (shift 1) at first + 2
    expected = {0: [0, 1], 1: [1, 2], 2: [2, 0], 3: [0, 2], 4: [1, 0], 5: [2, 1]}
    assert assign_for_topic(brokers, 6, 2, rack_aware_mode="disabled", fixed_start_index=0) == expected
    assert assign_for_topic(brokers, 6, 2, rack_aware_mode="safe", fixed_start_index=0) == expected
    # safe keeps the racks when every broker has one
    full = brokers_from_racks(KIP_RACKS)
    assert assign_for_topic(full, 12, 3, rack_aware_mode="safe", fixed_start_index=0) == KIP_12
    with pytest.raises(ValueError, match="rack_aware_mode"):
        assign_for_topic(plain, 1, 1, rack_aware_mode="ignore")


def test_zk_sorts_brokers_by_id_before_rack_unaware():
    shuffled = [BrokerMetadata(i) for i in (3, 0, 4, 1, 2)]
    assert assign_for_topic(shuffled, 10, 3, fixed_start_index=0) == ADMIN_TEST_10


def test_add_partitions_continues_the_shift():
    brokers = [BrokerMetadata(i) for i in range(5)]
    existing = {p: ADMIN_TEST_10[p] for p in range(3)}
    # partition 0's leader is broker 0 -> index 0 in the id-sorted list; startPartitionId = 3
    assert add_partitions(brokers, existing, 10) == {p: ADMIN_TEST_10[p] for p in range(3, 10)}


def test_add_partitions_start_index_is_an_index_in_the_sorted_id_list():
    brokers = [BrokerMetadata(i) for i in (10, 20, 30, 40)]
    existing = {0: [25, 30], 1: [30, 40]}  # first id >= 25 is 30, at index 2 -> fixedStartIndex 2
    assert add_partitions(brokers, existing, 3) == assign_replicas_to_brokers(brokers, 1, 2, 2, 2)
    # by hand: p = 2, n = 4: first = (2 + 2) % 4 = 0 -> broker 10; follower 1 + (2 + 0) % 3 = 3 -> broker 40
    assert add_partitions(brokers, existing, 3) == {2: [10, 40]}


def test_add_partitions_messages():
    brokers = [BrokerMetadata(i) for i in range(3)]
    with pytest.raises(InvalidPartitionsException) as e:
        add_partitions(brokers, {0: [0], 1: [1]}, 2, topic="t")
    assert str(e.value) == (
        "The number of partitions for a topic can only be increased. "
        "Topic t currently has 2 partitions, 2 would not be an increase."
    )
    with pytest.raises(
        AdminOperationException,
        match=r"^Unexpected existing replica assignment for topic 't', "
        r"partition id 0 is missing\.",
    ):
        add_partitions(brokers, {1: [1]}, 3, topic="t")


# ---------------------------------------------------------------- analysis helpers


def test_balance_tables_kip_example():
    brokers = brokers_from_racks(KIP_RACKS)
    bb = broker_balance(KIP_12, brokers)
    assert bb["leaders"].tolist() == [2] * 6 and bb["replicas"].tolist() == [6] * 6
    rb = rack_balance(KIP_12, brokers)
    assert rb.index.tolist() == ["rack1", "rack2", "rack3"]
    assert rb["leaders"].tolist() == [4, 4, 4] and rb["replicas"].tolist() == [12, 12, 12]
    assert (partition_racks(KIP_12, brokers)["racks spanned"] == 3).all()


def test_failure_impact_counts():
    brokers = brokers_from_racks(UNEVEN)
    a = {0: [0, 1], 1: [1, 0], 2: [2, 0]}
    t = failure_impact(a, brokers, failed_racks=["rack1"], min_insync_replicas=2)
    assert t["offline"].sum() == 0  # every partition has a replica in rack2
    assert t["leader_lost"].tolist() == [True, False, False]
    assert t["new_leader"].tolist() == [1, 1, 2]
    assert t["below_min_isr"].tolist() == [True, True, True]
    s = failure_summary(a, brokers, failed_racks="rack2")
    assert s == {"partitions": 3, "offline": 0, "leader_lost": 2, "below_min_isr": 0, "writable (acks=all)": 3}
    s = failure_summary(a, brokers, failed_brokers=[0, 1])
    assert s["offline"] == 2 and s["leader_lost"] == 2  # only partition 2 keeps a replica (broker 2)
    with pytest.raises(ValueError, match="no broker is in rack"):
        failure_impact(a, brokers, failed_racks=["rack9"])


def test_an_empty_assignment_gives_the_tables_with_no_partition_in_them():
    """A cluster with no partitions yet: no rows per partition or replica, zeros per broker and rack, and the
    columns (and their types) of a non-empty table. Each raised a pandas KeyError once."""
    brokers = brokers_from_racks(UNEVEN)
    full = {0: [0, 1], 1: [1, 0], 2: [2, 0]}
    for table in (replica_table, partition_racks, failure_impact):
        empty, some = table({}, brokers), table(full, brokers)
        assert empty.empty and list(empty.columns) == list(some.columns)
        assert empty.index.name == some.index.name and empty.index.dtype == some.index.dtype
        typed = [c for c in some.columns if some[c].dtype != object and c != "new_leader"]
        assert typed and (empty[typed].dtypes == some[typed].dtypes).all(), table.__name__
    bb = broker_balance({}, brokers)
    assert bb.index.tolist() == [0, 1, 2] and bb["leaders"].tolist() == [0] * 3 and bb["replicas"].tolist() == [0] * 3
    rb = rack_balance({}, brokers)
    assert rb["brokers"].tolist() == [1, 2] and rb["replicas"].tolist() == [0, 0]
    assert rb["replicas per broker"].tolist() == [0.0, 0.0]
    s = failure_summary({}, brokers, failed_racks=["rack1"])
    assert s == {"partitions": 0, "offline": 0, "leader_lost": 0, "below_min_isr": 0, "writable (acks=all)": 0}
    with pytest.raises(ValueError, match="no broker is in rack"):  # the racks are still checked
        failure_impact({}, brokers, failed_racks=["rack9"])
    # a comparison of two ways of placing a topic needs a topic: Kafka's own refusal of 0 partitions
    with pytest.raises(InvalidPartitionsException, match=r"Number of partitions must be larger than 0\."):
        rack_failure_comparison(UNEVEN, 0, 1)


def test_an_empty_failed_rack_is_a_rack_name_not_no_rack():
    """rack_failure_comparison(failed_rack="") once meant "no rack down": '' is a rack name (Kafka's racks may
    be ""), so it is refused as any rack no broker is in, and fails the brokers of a rack named ''. None is
    "no rack down"."""
    with pytest.raises(ValueError, match=r"no broker is in rack\(s\) \[''\]"):
        rack_failure_comparison(UNEVEN, 3, 2, failed_rack="")
    assert rack_failure_comparison(UNEVEN, 3, 2, failed_rack=None)["offline"].tolist() == [0, 0]
    # a rack really named '': failing it takes broker 0 down, and with RF 1 the partitions it holds go offline
    t = rack_failure_comparison({0: "", 1: "rack2", 2: "rack2"}, 3, 1, failed_rack="")
    assert (t["offline"] > 0).all()


def test_the_package_docstring_example_runs():
    """The package's docstring shows KIP-36's partition 6; the example must run and give the KIP's value."""
    import doctest

    import kafka_lab.assignment as pkg

    result = doctest.testmod(pkg)
    assert result.attempted >= 1 and result.failed == 0


@pytest.mark.parametrize(
    "brokers, says",
    [
        ([BrokerMetadata(0, "r1"), BrokerMetadata(1, "r2"), BrokerMetadata(0, "r3")], "0 is there twice"),
        ({-1: "r1", 0: "r2"}, "-1 is negative"),
    ],
)
def test_broker_ids_are_distinct_and_not_negative(brokers, says):
    """Each broker registers /brokers/ids/<broker.id>: two brokers cannot share an id, and none is negative."""
    for call in (lambda: assign_replicas_to_brokers(brokers, 3, 1, 0), lambda: broker_balance({0: [0]}, brokers)):
        with pytest.raises(ValueError, match=f"broker ids are distinct and at least 0 .*; {says}"):
            call()


def test_failure_impact_refuses_an_unknown_broker_as_it_refuses_an_unknown_rack():
    brokers = brokers_from_racks({0: "r1", 1: "r2", 2: "r2"})
    a = assign_replicas_to_brokers(brokers, 3, 2, 0)
    with pytest.raises(ValueError, match=r"no broker has id\(s\) \[7\]; the brokers are \[0, 1, 2\]"):
        failure_impact(a, brokers, failed_brokers=[1, 7])
    with pytest.raises(ValueError, match=r"no broker is in rack\(s\) \['r9'\]"):
        failure_impact(a, brokers, failed_racks=["r9"])
    assert failure_impact(a, brokers, failed_brokers=[1])["alive"].tolist() == [1, 1, 2]


@pytest.mark.parametrize("bad", [{0: []}, {0: [0, 1], 1: []}, {0: [0], 1: np.array([], dtype=int)}])
def test_failure_impact_refuses_a_partition_without_replicas_as_kafka_does(bad):
    """{0: []} raised a bare IndexError (reps[0]); Kafka refuses an empty replica list
    (AdminZkClient.validateReplicaAssignment), and so does Cluster.create_topic, with the same class and message."""
    p = next(p for p, r in bad.items() if len(r) == 0)
    brokers = brokers_from_racks(UNEVEN)
    for table in (failure_impact, failure_summary):
        with pytest.raises(InvalidReplicaAssignmentException) as info:
            table(bad, brokers, failed_brokers=[0])
        assert str(info.value) == f"Cannot have replication factor of 0 for partition id {p}."
        assert isinstance(info.value, ValueError)

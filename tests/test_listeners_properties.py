"""Properties of listener resolution: endpoints round-trip, valid configs resolve, broken ones name their setting."""

import string

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from kafka_lab.listeners import (
    SECURITY_PROTOCOLS,
    ConfigException,
    EndPoint,
    broker_registration,
    controller_endpoint,
    format_endpoint,
    parse_endpoint,
    registered_endpoints,
    resolve,
)

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

names = st.text(string.ascii_uppercase + string.digits + "_", min_size=1, max_size=10)
hostnames = st.from_regex(r"[a-z][a-z0-9-]{0,10}(\.[a-z0-9-]{1,8}){0,2}", fullmatch=True)
ipv4 = st.tuples(*[st.integers(0, 255)] * 4).map(lambda t: ".".join(map(str, t))).filter(lambda h: h != "0.0.0.0")
ipv6 = st.sampled_from(["::1", "fe80::1%eth0", "2001:db8::8", "::ffff:10.0.0.1"])
hosts = st.one_of(st.none(), hostnames, ipv4, ipv6)
any_hosts = st.one_of(st.none(), st.text(string.ascii_letters + string.digits + "-%._:", min_size=1, max_size=12))
ports = st.integers(1, 65535)
protocols = st.sampled_from(SECURITY_PROTOCOLS)


@SETTINGS
@given(names, any_hosts, st.integers(-(2**31), 2**31 - 1), protocols)
def test_parse_format_round_trip(name, host, port, protocol):
    ep = EndPoint(name, host, port, protocol)
    text = format_endpoint(ep)
    assert parse_endpoint(text, {name: protocol}) == ep
    assert format_endpoint(parse_endpoint(text, {name: protocol})) == text


def _case(draw, name):
    return "".join(c.lower() if draw(st.booleans()) else c for c in name)


def _join(draw, items):
    return "".join(
        (draw(st.sampled_from(["", " ", "\t", "  "])) if i else "")
        + ("," if i else "")
        + draw(st.sampled_from(["", " "]))
        + x
        for i, x in enumerate(items)
    )


@st.composite
def valid_configs(draw):
    """A valid 2.8 config and what it must resolve to."""
    n = draw(st.integers(1, 4))
    lnames = draw(st.lists(names, min_size=n, max_size=n, unique=True))
    lports = draw(st.lists(ports, min_size=n, max_size=n, unique=True))
    protos = {nm: draw(protocols) for nm in lnames}
    bound = [EndPoint(nm, draw(hosts), p, protos[nm]) for nm, p in zip(lnames, lports)]
    extra = draw(st.lists(names.filter(lambda x: x not in lnames), max_size=2, unique=True))
    pmap = {**protos, **{x: draw(protocols) for x in extra}}
    props = {
        "listener.security.protocol.map": _join(
            draw, [f"{_case(draw, k)}:{v.lower() if draw(st.booleans()) else v}" for k, v in pmap.items()]
        )
    }
    props["listeners"] = _join(
        draw, [f"{_case(draw, e.listener_name)}://" + format_endpoint(e).split("://", 1)[1] for e in bound]
    )
    if draw(st.booleans()):
        adv_names = draw(st.lists(st.sampled_from(lnames), min_size=1, max_size=n, unique=True))
        advertised = [EndPoint(nm, draw(st.one_of(hostnames, ipv4, ipv6)), draw(ports), protos[nm]) for nm in adv_names]
        props["advertised.listeners"] = _join(draw, [format_endpoint(e) for e in advertised])
    else:
        advertised = bound
    adv_names = [e.listener_name for e in advertised]
    ibl = draw(st.sampled_from(adv_names))
    props["inter.broker.listener.name"] = _case(draw, ibl)
    cp = None
    others = [x for x in adv_names if x != ibl]
    if others and draw(st.booleans()):
        cp = draw(st.sampled_from(others))
        props["control.plane.listener.name"] = cp
    return props, bound, advertised, ibl, cp


@SETTINGS
@given(valid_configs())
def test_valid_configs_resolve(case):
    props, bound, advertised, ibl, cp = case
    b = resolve(props)
    assert list(b.listeners) == bound
    assert list(b.advertised_listeners) == advertised
    assert b.inter_broker_listener_name == ibl
    assert (b.control_plane_listener.listener_name if b.control_plane_listener else None) == cp
    assert [e for e in b.listeners if e.listener_name != cp] == list(b.data_plane_listeners)
    reg = broker_registration(b, timestamp_ms=0, canonical_host_name="me")
    assert [e.listener_name for e in registered_endpoints(reg)] == [e.listener_name for e in advertised]
    assert controller_endpoint(b, reg, 1).listener_name == (cp or ibl)


@SETTINGS
@given(
    st.integers(1, 65535),
    st.sampled_from(["", "h", "10.0.0.1", "::1"]),
    st.one_of(st.none(), hostnames),
    st.one_of(st.none(), ports),
)
def test_legacy_host_port_configs_resolve(port, host, adv_host, adv_port):
    props = {"port": str(port), "host.name": host}
    if adv_host is not None:
        props["advertised.host.name"] = adv_host
    if adv_port is not None:
        props["advertised.port"] = str(adv_port)
    b = resolve(props)
    assert b.listeners == (EndPoint("PLAINTEXT", host or None, port, "PLAINTEXT"),)
    expected_host = adv_host if adv_host is not None else (host or None)
    expected_port = adv_port if adv_port is not None else port
    assert b.advertised_listeners == (EndPoint("PLAINTEXT", expected_host, expected_port, "PLAINTEXT"),)


BREAKS = [
    "duplicate_port",
    "bad_protocol",
    "cp_is_ibl",
    "ibl_not_in_map",
    "advertised_not_listened",
    "advertised_zero",
    "name_not_in_map",
    "both_ibl_settings",
]


def _break(props, bound, advertised, ibl, how, draw):
    """Break a valid config in a known way; return it with the setting Kafka's error must be about."""
    p = dict(props)
    if how == "duplicate_port":
        assume(len(bound) >= 2)
        ports_ = [e.port for e in bound]
        ports_[1] = ports_[0]
        p["listeners"] = ",".join(
            format_endpoint(EndPoint(e.listener_name, e.host, q, e.security_protocol)) for e, q in zip(bound, ports_)
        )
        return p, "listeners"
    if how == "bad_protocol":
        p["listener.security.protocol.map"] += ",EXTRA:TLS"
        return p, "listener.security.protocol.map"
    if how == "cp_is_ibl":
        p["control.plane.listener.name"] = ibl
        return p, "control.plane.listener.name"
    if how == "ibl_not_in_map":
        p["inter.broker.listener.name"] = "NOT_IN_MAP_X"
        return p, "inter.broker.listener.name"
    if how == "advertised_not_listened":
        p["listener.security.protocol.map"] += ",ELSEWHERE:SSL"
        p["advertised.listeners"] = ",".join([format_endpoint(e) for e in advertised] + ["ELSEWHERE://x:1"])
        return p, "advertised.listeners"
    if how == "advertised_zero":
        p["advertised.listeners"] = ",".join(
            format_endpoint(EndPoint(e.listener_name, "0.0.0.0" if i == 0 else e.host, e.port, e.security_protocol))
            for i, e in enumerate(advertised)
        )
        return p, "advertised.listeners"
    if how == "name_not_in_map":
        victim = draw(st.sampled_from([e.listener_name for e in bound]))
        entries = [
            kv
            for kv in p["listener.security.protocol.map"].split(",")
            if kv.rsplit(":", 1)[0].strip().upper() != victim
        ]
        p["listener.security.protocol.map"] = ",".join(entries) if entries else "UNUSED_Y:SSL"
        in_adv = "advertised.listeners" in p and victim in [e.listener_name for e in advertised]
        return p, "advertised.listeners" if in_adv else "listeners"
    if how == "both_ibl_settings":
        p["security.inter.broker.protocol"] = "PLAINTEXT"
        return p, "inter.broker.listener.name"
    raise AssertionError(how)


@SETTINGS
@given(valid_configs(), st.sampled_from(BREAKS), st.data())
def test_broken_configs_name_their_setting(case, how, data):
    props, bound, advertised, ibl, _cp = case
    broken, key = _break(props, bound, advertised, ibl, how, data.draw)
    try:
        resolve(broken)
    except ConfigException as e:
        assert e.config_key == key, (how, str(e))
        assert (
            key in str(e)
            or (key in ("listeners", "advertised.listeners") and "broker listeners" in str(e))
            or key == "security.inter.broker.protocol"
        ), (how, str(e))
    else:
        raise AssertionError(f"{how} was accepted: {broken}")

"""Lab 01's panels: a broker config in, its listeners, ZooKeeper registration and connections out.

:func:`listener_panel` -- preset dropdown (the primary control) and a ``server.properties`` text
area; shows the resolved listeners as a table, a diagram (who connects -> what is published ->
what is bound), the ``/brokers/ids/<id>`` JSON, or Kafka's own error for an invalid config.
:func:`migration_panel` -- KIP-291's two rolling upgrades on three brokers, one step at a time.
The model is :mod:`kafka_lab.listeners`; this module only draws it.
"""

from __future__ import annotations

import html

import ipywidgets as widgets
import pandas as pd
from IPython.display import HTML

from kafka_lab.listeners import (
    KIP291_TIMESTAMP_MS,
    PRESETS,
    BrokerListeners,
    ConfigException,
    broker_registration,
    fix_hint,
    listener_table,
    migration_steps,
    parse_properties,
    registered_endpoints,
    registration_json,
    resolve,
    users_of,
)

from . import GREY, MUTED, PALETTE, primary, primary_output

__all__ = [
    "listener_panel",
    "render_config",
    "show_config",
    "listener_svg",
    "error_html",
    "migration_panel",
    "migration_html",
    "listeners_html",
    "show_table",
    "host_port_note",
    "registrations_html",
    "show_registrations",
]

_CP_COLOUR, _IB_COLOUR, _CLIENT_COLOUR, _IDLE = PALETTE[3], PALETTE[0], PALETTE[2], GREY
#: the panels' tables: compact and left-aligned. The selectors name the table's class too, so they outrank
#: JupyterLab's own output-table rules (right-aligned cells, fixed layout, centred table).
_TABLE_CSS = (
    "<style>.kl-listeners table.kl-table, .kl-migration table.kl-table "
    "{table-layout: auto; width: auto; margin-left: 0; margin-right: auto}"
    ".kl-listeners table.kl-table td, .kl-listeners table.kl-table th, .kl-migration table.kl-table td, "
    ".kl-migration table.kl-table th {padding: 3px 9px; text-align: left; vertical-align: top; line-height: 1.3}"
    ".kl-listeners table.kl-table td.kl-nowrap {white-space: nowrap}"
    ".kl-listeners table.kl-table .kl-means {color: #555; font-size: 90%}</style>"
)


def error_html(exc: ConfigException, props=None, *, hint: bool = True) -> str:
    """Kafka's message, plainly: what Kafka throws, the message, and what to change (following the cause
    the message names, :func:`~kafka_lab.listeners.fix_hint`; ``props`` refine it). ``hint=False``: Kafka's
    message only, for a config an exercise asks the learner to fix."""
    advice = fix_hint(exc, props) if hint else ""
    return (
        "<div class='kl-config-error' style='border-left:4px solid #b3261e;padding:8px 12px;background:#fdf3f2'>"
        f"<b>Kafka refuses to start</b> (<code>{exc.kafka_exception}</code>, setting <code>{exc.config_key}</code>):"
        f"<pre style='white-space:pre-wrap;margin:6px 0'>{html.escape(str(exc))}</pre>"
        f"<span style='color:#555'>{html.escape(advice)}</span></div>"
    )


def _role_colour(broker: BrokerListeners, name: str) -> str:
    users = users_of(broker, name)
    if "controller" in users and broker.control_plane_listener is not None:
        return _CP_COLOUR
    if "other brokers" in users:
        return _IB_COLOUR
    return _CLIENT_COLOUR if users and not users[0].startswith("nobody") else _IDLE


def listener_svg(broker: BrokerListeners, registration: dict) -> str:
    """Three columns: who connects -> the endpoint published in ZooKeeper -> the socket the broker binds."""
    names = list(
        dict.fromkeys(
            [e.listener_name for e in broker.listeners] + [e.listener_name for e in broker.advertised_listeners]
        )
    )
    published = dict(zip([e.listener_name for e in broker.advertised_listeners], registration["endpoints"]))
    row_h, top, width = 58, 46, 860
    height = top + row_h * len(names) + 10
    esc = html.escape
    parts = [
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' "
        "style='font-family:sans-serif;font-size:12px'>",
        "<defs><marker id='kl-arrow' markerWidth='8' markerHeight='8' refX='7' refY='3' orient='auto'>"
        f"<path d='M0,0 L7,3 L0,6 z' fill='{MUTED}'/></marker></defs>",
    ]
    for x, title in (
        (10, "who connects"),
        (230, f"published in ZooKeeper (/brokers/ids/{broker.broker_id})"),
        (560, "the broker binds (listeners)"),
    ):
        parts.append(f"<text x='{x}' y='20' font-weight='bold'>{esc(title)}</text>")
    for i, name in enumerate(names):
        y = top + i * row_h
        colour = _role_colour(broker, name)
        users = users_of(broker, name)
        who = ", ".join(users) if users else "-"
        parts.append(
            f"<rect x='10' y='{y}' width='190' height='40' rx='6' fill='{colour}' fill-opacity='0.15' "
            f"stroke='{colour}'/>"
        )
        if len(who) <= 28:
            parts.append(f"<text x='18' y='{y + 24}'>{esc(who)}</text>")
        else:  # two lines: the first users, then the last one
            head, _, tail = who.rpartition(", ")
            parts.append(f"<text x='18' y='{y + 17}'>{esc(head)},</text><text x='18' y='{y + 33}'>{esc(tail)}</text>")
        pub = published.get(name)
        if pub:
            parts.append(
                f"<line x1='200' y1='{y + 20}' x2='228' y2='{y + 20}' stroke='{MUTED}' marker-end='url(#kl-arrow)'/>"
            )
            parts.append(
                f"<rect x='230' y='{y}' width='300' height='40' rx='6' fill='white' stroke='{colour}'/>"
                f"<text x='238' y='{y + 17}' font-weight='bold'>{esc(pub)}</text>"
                f"<text x='238' y='{y + 33}' fill='{MUTED}'>{esc(broker.listener_security_protocol_map.get(name, ''))}"
                "</text>"
            )
        else:
            parts.append(f"<text x='238' y='{y + 24}' fill='{GREY}'>not published</text>")
        bound = broker.listener(name)
        if bound:
            plane = broker.plane(name)
            label = f"{plane} plane" + (" (1 thread, queue of 20)" if plane == "control" else "")
            if pub:
                parts.append(
                    f"<line x1='530' y1='{y + 20}' x2='558' y2='{y + 20}' stroke='{MUTED}' stroke-dasharray='4 3' "
                    "marker-end='url(#kl-arrow)'/>"
                )
            parts.append(
                f"<rect x='560' y='{y}' width='290' height='40' rx='6' fill='{colour}' fill-opacity='0.08' "
                f"stroke='{colour}' stroke-width='{3 if plane == 'control' else 1}'/>"
                f"<text x='568' y='{y + 17}' font-weight='bold'>{esc(bound.connection_string)}</text>"
                f"<text x='568' y='{y + 33}' fill='{MUTED}'>{esc(label)}</text>"
            )
    parts.append("</svg>")
    return "".join(parts)


def _cell(value) -> str:
    return "-" if value is None or (isinstance(value, float) and pd.isna(value)) else html.escape(str(value))


def listeners_html(table: pd.DataFrame) -> str:
    """:func:`kafka_lab.listeners.listener_table` as a compact table: left-aligned, one line per address,
    and what the bind address means written under it instead of in a column of its own."""
    head = (
        "<tr><th>listener</th><th>security protocol</th><th>binds (listeners)<br>"
        "<span class='kl-means'>which means</span></th><th>publishes (advertised.listeners)</th>"
        "<th>plane</th><th>used by</th></tr>"
    )
    rows = []
    for r in table.to_dict("records"):
        rows.append(
            f"<tr><td>{_cell(r['listener'])}</td><td>{_cell(r['security protocol'])}</td>"
            f"<td class='kl-nowrap'>{_cell(r['binds (listeners)'])}<br>"
            f"<span class='kl-means'>{_cell(r['which means'])}</span></td>"
            f"<td class='kl-nowrap'>{_cell(r['publishes (advertised.listeners)'])}</td>"
            f"<td>{_cell(r['plane'])}</td><td>{_cell(r['used by'])}</td></tr>"
        )
    return f"<table class='kl-table'>{head}{''.join(rows)}</table>"


def show_table(table: pd.DataFrame) -> HTML:
    """Display a :func:`kafka_lab.listeners.listener_table` compactly (see :func:`listeners_html`)."""
    return HTML(f"{_TABLE_CSS}<div class='kl-listeners'>{listeners_html(table)}</div>")


def render_config(config, *, canonical_host_name: str = "broker1.example.com", hint: bool = True) -> str:
    """The panel's whole output for one config (``server.properties`` text or a dict), as HTML.

    ``canonical_host_name`` stands in for the machine's name in the registration of endpoints
    published without a host; ``hint=False`` shows Kafka's refusal without the lab's advice.
    """
    props = parse_properties(config) if isinstance(config, str) else config
    try:
        broker = resolve(props)
    except ConfigException as exc:
        return error_html(exc, props, hint=hint)
    except TypeError as exc:
        return f"<div class='kl-config-error'>{html.escape(str(exc))}</div>"
    reg = broker_registration(broker, timestamp_ms=KIP291_TIMESTAMP_MS, canonical_host_name=canonical_host_name)
    table = listeners_html(listener_table(broker, canonical_host_name))
    summary = (
        f"inter-broker listener <b>{broker.inter_broker_listener_name}</b> "
        f"({broker.inter_broker_security_protocol}); "
        + (
            f"dedicated control plane on <b>{broker.control_plane_listener.connection_string}</b>"
            if broker.control_plane_listener
            else "no control.plane.listener.name: controller requests share the data plane"
        )
        + f"; a controller with this config connects on <b>{broker.controller_to_broker_listener_name}</b>."
    )
    return (
        f"{_TABLE_CSS}<div class='kl-listeners'><p>{summary}</p>{table}{listener_svg(broker, reg)}"
        "<details><summary>the JSON this broker writes to ZooKeeper</summary>"
        f"<pre>{html.escape(registration_json(reg, indent=4))}</pre>"
        f"<p class='kl-means'>{html.escape(host_port_note(reg))}</p></details></div>"
    )


def host_port_note(registration: dict) -> str:
    """Where a registration's top-level ``host`` and ``port`` come from (they surprise readers of the KIP)."""
    first = next((e for e in registered_endpoints(registration) if e.security_protocol == "PLAINTEXT"), None)
    if first is None:
        return (
            '"host": null and "port": -1: no published endpoint speaks PLAINTEXT, so clients too old to read '
            '"endpoints" cannot connect.'
        )
    return (
        f'"host" and "port" are those of the first PLAINTEXT endpoint, {first.connection_string}, for clients '
        'too old to read "endpoints".'
    )


def registrations_html(kip: dict, kafka: dict, *, kip_title: str = "the KIP's example", kafka_title: str = "") -> str:
    """Two registrations side by side, pretty-printed: the KIP's as printed, and what Kafka 2.8 writes."""
    kafka_title = kafka_title or f"what Kafka 2.8 writes (version {kafka.get('version')})"
    kip_title = f"{kip_title} (version {kip.get('version')})"
    cols = "".join(
        f"<td><b>{html.escape(title)}</b><pre style='margin:4px 0'>{html.escape(registration_json(reg, indent=2))}"
        "</pre></td>"
        for title, reg in ((kip_title, kip), (kafka_title, kafka))
    )
    return f"{_TABLE_CSS}<div class='kl-listeners'><table class='kl-table'><tr>{cols}</tr></table></div>"


def show_registrations(kip: dict, kafka: dict) -> HTML:
    """Display :func:`registrations_html` in a notebook."""
    return HTML(registrations_html(kip, kafka))


def show_config(config, *, hint: bool = True) -> HTML:
    """Display one config's resolution (or Kafka's error) in a notebook cell; ``hint=False`` leaves out the
    lab's advice on what to change (for a config an exercise asks the learner to fix)."""
    return HTML(render_config(config, hint=hint))


def listener_panel(preset: str | None = None) -> widgets.VBox:
    """Preset dropdown (primary control) + properties text area -> the resolved listeners (primary output)."""
    names = list(PRESETS)
    choose = primary(
        widgets.Dropdown(
            options=names, value=preset or names[0], description="preset", layout=widgets.Layout(width="640px")
        )
    )
    text = widgets.Textarea(
        value=PRESETS[choose.value],
        rows=8,
        continuous_update=False,
        layout=widgets.Layout(width="95%"),
        description="properties",
    )
    out = primary_output(widgets.HTML())

    def on_preset(change):
        text.value = PRESETS[change["new"]]

    def on_text(change=None):
        out.value = render_config(text.value)

    choose.observe(on_preset, names="value")
    text.observe(on_text, names="value")
    on_text()
    return widgets.VBox([choose, text, out])


_MIGRATION_COLUMNS = ["broker", "config", "control.plane.listener.name", "controller connects to", "served by"]


def migration_html(step: int, one_round: bool = False) -> str:
    """One step of the migration: what happened, who is controller, and each broker's row."""
    df = migration_steps(one_round=one_round)
    rows = df[df["step"] == step]
    if rows.empty:
        raise ValueError(f"no step {step}; the steps are 0 to {df['step'].max()}")
    first = rows.iloc[0]
    return (
        f"{_TABLE_CSS}<div class='kl-migration'><p><b>step {step}</b>: {html.escape(first['action'])}. "
        f"Controller: <b>broker {first['controller']}</b>.</p>"
        + rows[_MIGRATION_COLUMNS].fillna("-").to_html(index=False, border=0, classes="kl-table")
        + "</div>"
    )


def migration_panel() -> widgets.VBox:
    """A step slider and a one-round shortcut checkbox over :func:`kafka_lab.listeners.migration_steps`."""
    last = int(migration_steps()["step"].max())
    step = widgets.IntSlider(value=0, min=0, max=last, description="step", continuous_update=False)
    shortcut = widgets.Checkbox(
        value=False,
        description="skip round 1 (one rolling restart)",
        indent=False,
        layout=widgets.Layout(width="320px"),
    )
    out = widgets.HTML()

    def redraw(_=None):
        step.max = int(migration_steps(one_round=shortcut.value)["step"].max())
        out.value = migration_html(min(step.value, step.max), shortcut.value)

    step.observe(redraw, names="value")
    shortcut.observe(redraw, names="value")
    redraw()
    return widgets.VBox([widgets.HBox([step, shortcut]), out])

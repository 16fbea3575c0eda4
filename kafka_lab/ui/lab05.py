"""Lab 05's panel: acks=1 records acknowledged by the old leader, then truncated.

The drawing is :mod:`kafka_lab.ui.cluster`'s; this module picks the incident, the controls and the figures.

- :func:`truncation_panel` -- the live experiment: load (primary), when the controller moves orders-0, acks,
  request.timeout.ms, min.insync.replicas, the control plane per broker and the controller's broker; where every
  record ended up per partition, the records acknowledged then truncated over time, and the ledger.
"""

from __future__ import annotations

import ipywidgets as widgets

from kafka_lab.sim import truncation_incident

from .cluster import (
    PANEL_RUN,
    IncidentControls,
    incident_panel,
    ledger_table,
    outcomes_figure,
    truncated_acks_figure,
)

__all__ = ["PANEL_OPTIONS", "MOVE_AT", "truncation_panel", "acks_x_max"]

#: the live panel's runs: 5 partitions and 100 simulated ms, so that a control answers in a fraction of a second
PANEL_OPTIONS = PANEL_RUN
#: when the controller may move orders-0 in the panel (``decision_ms``; its LeaderAndIsr leaves 2 ms later): the lab's
#: incident, during broker 1's start-up backlog, and once that backlog is gone (up to 200 producers)
MOVE_AT = {2.0: "2 ms (the lab's incident)", 10.0: "10 ms", 50.0: "50 ms"}


def acks_x_max(res) -> float:
    """How far the panel's acknowledged-then-truncated figure reaches: 60 ms, or 30 ms past a later decision."""
    un = res.unavailability
    decided = float(un["decided_ms"].max()) if len(un) else 0.0
    return max(60.0, decided + 30.0)


def truncation_panel(producers: int = 200, **options) -> widgets.VBox:
    """The live experiment (``options`` override :data:`PANEL_OPTIONS`, e.g. ``until_ms``)."""
    controls = IncidentControls(
        truncation_incident, producers=producers, acks=1, move_at=MOVE_AT, **{**PANEL_OPTIONS, **options}
    )

    def draw(runs):
        res = next(iter(runs.values()))
        return [outcomes_figure(runs), truncated_acks_figure(runs, x_max=acks_x_max(res)), ledger_table(res)]

    return incident_panel(
        controls,
        draw,
        note="<b>orders</b> has 5 partitions here (20 in the KIP's example above); "
        "every run is 100 simulated ms, so retries still under way show as "
        "pending.",
    )

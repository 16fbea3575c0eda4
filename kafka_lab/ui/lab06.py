"""Lab 06's panel: stale metadata on a busy broker, and a leader change with the control plane per broker.

The drawing is :mod:`kafka_lab.ui.cluster`'s; this module picks the incidents, the controls and the figures.

- :func:`staleness_panel` -- the live experiment: which broker is busy (the old leader or the new one),
  load (primary), acks, request.timeout.ms, min.insync.replicas, the control plane per broker and the controller's broker; each
  broker's stale metadata, who leads orders-0 when, the producers' sends to a wrong leader, and the ledger.
"""

from __future__ import annotations

import ipywidgets as widgets

from kafka_lab.sim import stale_metadata_incident, unavailability_incident

from .cluster import (
    PANEL_RUN,
    IncidentControls,
    incident_panel,
    leadership_figure,
    ledger_table,
    staleness_figure,
    wrong_leader_figure,
)

__all__ = ["PANEL_OPTIONS", "BUSY_BROKER", "staleness_panel"]

#: the live panel's runs: 5 partitions and 70 simulated ms (the windows close by 50 ms even with 400 producers),
#: so that a control answers in a fraction of a second
PANEL_OPTIONS = {**PANEL_RUN, "until_ms": 70.0}
#: the panel's two incidents, by the busy broker's role
BUSY_BROKER = {"1, the old leader": stale_metadata_incident, "2, the new leader": unavailability_incident}


def staleness_panel(producers: int = 200, **options) -> widgets.VBox:
    """The live experiment (``options`` override :data:`PANEL_OPTIONS`, e.g. ``until_ms``)."""
    controls = IncidentControls(
        BUSY_BROKER, producers=producers, max_producers=400, acks=1, **{**PANEL_OPTIONS, **options}
    )

    def draw(runs):
        res = next(iter(runs.values()))
        return [staleness_figure(runs), leadership_figure(runs, x_max=40), wrong_leader_figure(runs), ledger_table(res)]

    return incident_panel(
        controls,
        draw,
        note="<b>orders</b> has 5 partitions here (20 above); every run is 70 "
        "simulated ms. With broker 1 busy the producers ask it for metadata.",
    )

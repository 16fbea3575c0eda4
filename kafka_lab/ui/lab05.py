"""Lab 05's panel: acks=1 records acknowledged by the old leader, then truncated.

The drawing is :mod:`kafka_lab.ui.cluster`'s; this module picks the incident, the controls and the figures.

- :func:`truncation_panel` -- the live experiment: load (primary), acks, request.timeout.ms,
  min.insync.replicas, the control plane per broker and the controller's broker; where every record ended up per partition,
  the records acknowledged then truncated over time, and the ledger.
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

__all__ = ["PANEL_OPTIONS", "truncation_panel"]

#: the live panel's runs: 5 partitions and 100 simulated ms, so that a control answers in a fraction of a second
PANEL_OPTIONS = PANEL_RUN


def truncation_panel(producers: int = 200, **options) -> widgets.VBox:
    """The live experiment (``options`` override :data:`PANEL_OPTIONS`, e.g. ``until_ms``)."""
    controls = IncidentControls(truncation_incident, producers=producers, acks=1, **{**PANEL_OPTIONS, **options})

    def draw(runs):
        res = next(iter(runs.values()))
        return [outcomes_figure(runs), truncated_acks_figure(runs, x_max=60), ledger_table(res)]

    return incident_panel(
        controls,
        draw,
        note="<b>orders</b> has 5 partitions here (20 in the KIP's example above); "
        "every run is 100 simulated ms, so retries still under way show as "
        "pending.",
    )

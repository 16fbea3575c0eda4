"""Lab 04's panel: acks=all produces in broker 1's purgatory while its LeaderAndIsr waits.

The drawing is :mod:`kafka_lab.ui.cluster`'s; this module picks the incident, the controls and the figures.

- :func:`purgatory_panel` -- the live experiment: load (primary), acks, request.timeout.ms,
  min.insync.replicas, the control plane per broker and the controller's broker; broker 1's purgatory and produce latency,
  who leads orders-0, and the ledger.
"""

from __future__ import annotations

import ipywidgets as widgets

from kafka_lab.sim import purgatory_incident

from .cluster import IncidentControls, incident_panel, leadership_figure, ledger_table, purgatory_figure

__all__ = ["PANEL_OPTIONS", "purgatory_panel"]

#: the live panel's runs: one partition and 150 simulated ms, so that a control answers in a fraction of a second
PANEL_OPTIONS = {"partitions": 1, "burst": 1, "rate_per_s": 20, "until_ms": 150.0}


def purgatory_panel(producers: int = 200, **options) -> widgets.VBox:
    """The live experiment (``options`` override :data:`PANEL_OPTIONS`, e.g. ``until_ms``)."""
    controls = IncidentControls(purgatory_incident, producers=producers, acks="all", **{**PANEL_OPTIONS, **options})

    def draw(runs):
        res = next(iter(runs.values()))
        return [purgatory_figure(runs), leadership_figure(runs), ledger_table(res)]

    return incident_panel(
        controls,
        draw,
        note="<b>orders</b> has one partition here; every run is 150 simulated ms "
        "(the same seed: only what you change differs).",
    )

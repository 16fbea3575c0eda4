"""Widgets and figures for the notebooks: the only part of kafka_lab that knows about Jupyter.

Conventions every lab panel follows (the browser tests rely on them):

- The one control a learner is most likely to move first carries the CSS class
  ``kl-primary-control`` (``widget.add_class(PRIMARY_CONTROL)``), and the widget whose content that
  control drives carries ``kl-primary-output``. The browser test moves the control and asserts that
  the output's text changes.
- Figures are plotly, shown with the default (mimetype) renderer, inside an ``ipywidgets.Output``
  when they must redraw; nothing fetches from the internet.
- Model code never imports from here; this module calls the model.
"""

from __future__ import annotations

import ipywidgets as widgets

PRIMARY_CONTROL = "kl-primary-control"
PRIMARY_OUTPUT = "kl-primary-output"

#: one qualitative palette for every lab (racks, listeners, planes keep their colour across figures)
PALETTE = ["#4C78A8", "#F58518", "#54A24B", "#E45756", "#72B7B2", "#B279A2", "#FF9DA6", "#9D755D", "#BAB0AC", "#EECA3B"]


def primary(widget: widgets.Widget) -> widgets.Widget:
    """Mark ``widget`` as the lab's primary control (see module docstring)."""
    widget.add_class(PRIMARY_CONTROL)
    return widget


def primary_output(widget: widgets.Widget) -> widgets.Widget:
    """Mark ``widget`` as what the primary control drives."""
    widget.add_class(PRIMARY_OUTPUT)
    return widget


def show_figure(fig, out: widgets.Output | None = None) -> None:
    """Show a plotly figure (in ``out`` when given, replacing what it held)."""
    if out is None:
        fig.show()
        return
    with out:
        out.clear_output(wait=True)
        fig.show()

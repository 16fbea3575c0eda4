"""Widgets and figures for the notebooks: the only part of kafka_lab that knows about Jupyter.

Conventions every lab panel follows (the browser tests rely on them):

- The one control a learner is most likely to move first carries the CSS class
  ``kl-primary-control`` (``widget.add_class(PRIMARY_CONTROL)``), and the widget whose content that
  control drives carries ``kl-primary-output``. The browser test moves the control and asserts that
  the output's text changes.
- Figures are plotly, shown with the default (mimetype) renderer, inside an ``ipywidgets.Output``
  when they must redraw; nothing fetches from the internet.
- A redraw that runs a fresh simulation (lab 03's panels; labs 04-06 go through
  :func:`~kafka_lab.incident_stats.cached_run`, which does its own) ends with :func:`release_runs`, so
  that the cyclic collector never frees many runs in one answer.
- Model code never imports from here; this module calls the model.
"""

from __future__ import annotations

import gc

import ipywidgets as widgets

PRIMARY_CONTROL = "kl-primary-control"
PRIMARY_OUTPUT = "kl-primary-output"

#: the one qualitative palette of every lab, chosen for colour-blind readers: Okabe and Ito's
#: "Color Universal Design" set (2008), distinguishable with protanopia, deuteranopia and tritanopia
#: (blue, orange, bluish green, vermillion, sky blue, reddish purple, yellow). Racks, listeners and
#: planes keep their colour across figures.
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#56B4E9", "#CC79A7", "#F0E442"]
#: what still works / only partly / no longer (lab 00's states, lab 02's shading)
GOOD, PARTLY, BAD = PALETTE[2], PALETTE[1], PALETTE[3]
#: neutrals for what is not data: theory's and reference lines (INK), secondary text (MUTED), idle or
#: not-in-Kafka's-log parts (GREY), faded marks (LIGHT)
INK, MUTED, GREY, LIGHT = "#333333", "#555555", "#999999", "#D9D9D9"
#: every colour a lab's figure may use
COLOURS = frozenset(PALETTE) | {INK, MUTED, GREY, LIGHT}
#: the plotly template every figure uses: plotly_white with the palette as its colour cycle
TEMPLATE = "plotly_white+kafka_lab"

#: the labs' HTML tables: compact, left-aligned, padded; the doubled class outranks JupyterLab's
#: rules for output tables (right-aligned cells, fixed layout, a centred table)
TABLE_CSS = (
    "<style>table.kl-table.kl-table {table-layout: auto; width: auto; margin-left: 0; margin-right: auto;"
    " border-collapse: collapse}"
    "table.kl-table.kl-table td, table.kl-table.kl-table th {padding: 3px 12px 3px 0; text-align: left;"
    " vertical-align: top; line-height: 1.3}"
    "table.kl-table.kl-table th {border-bottom: 1px solid #bbb}"
    "table.kl-table.kl-table td.kl-num, table.kl-table.kl-table th.kl-num {text-align: right}</style>"
)


def _register_template() -> None:
    import plotly.graph_objects as go
    import plotly.io as pio

    if "kafka_lab" not in pio.templates:
        pio.templates["kafka_lab"] = go.layout.Template(layout=dict(colorway=PALETTE))


_register_template()


def plural(n: int, word: str, many: str | None = None) -> str:
    """``1 handler``, ``8 handlers``: a count with its noun (``many`` for irregular plurals)."""
    return f"{n} {word if n == 1 else (many or word + 's')}"


def html_table(header, rows, *, numeric=()) -> str:
    """A left-aligned HTML table (cells are HTML; escape text first). ``numeric``: column indexes to right-align."""

    def cell(tag, i, value):
        cls = " class='kl-num'" if i in numeric else ""
        return f"<{tag}{cls}>{value}</{tag}>"

    head = "".join(cell("th", i, h) for i, h in enumerate(header))
    body = "".join("<tr>" + "".join(cell("td", i, v) for i, v in enumerate(r)) + "</tr>" for r in rows)
    return f"{TABLE_CSS}<table class='kl-table'><tr>{head}</tr>{body}</table>"


_TEMPLATE_SPEC: dict = {}


def plain_figure(data: list, layout: dict):
    """A plotly figure from plain specs (dicts), in the labs' template, without plotly's per-property validation.

    Validating every property costs a live panel 0.03-0.1 s an answer (lab 03's two figures took 0.115 s of a
    0.41 s answer). The specs are checked all the same: tests/test_figures.py rebuilds every figure the labs draw
    with validation on, so a misspelt property still fails a test.
    """
    import plotly.graph_objects as go

    if not _TEMPLATE_SPEC:
        import plotly.io as pio

        _TEMPLATE_SPEC.update(pio.templates[TEMPLATE].to_plotly_json())  # plotly_white with the labs' one palette
    return go.Figure({"data": data, "layout": {"template": _TEMPLATE_SPEC, **layout}}, _validate=False)


def vline(x: float, colour: str, *, axis: str = "", dash: str = "dot") -> dict:
    """A vertical line at ``x`` across the plot (``axis`` "2" for the second subplot)."""
    return {
        "type": "line",
        "x0": x,
        "x1": x,
        "xref": f"x{axis}",
        "y0": 0,
        "y1": 1,
        "yref": f"y{axis} domain",
        "line": {"color": colour, "dash": dash, "width": 1.5},
    }


def legend_line(name: str, colour: str, dash: str = "dot", *, axis: str = "") -> dict:
    """A legend entry for a shape (shapes have none of their own)."""
    return {
        "type": "scatter",
        "x": [None],
        "y": [None],
        "mode": "lines",
        "hoverinfo": "skip",
        "name": name,
        "line": {"color": colour, "dash": dash, "width": 1.5},
        "xaxis": f"x{axis}",
        "yaxis": f"y{axis}",
    }


def primary(widget: widgets.Widget) -> widgets.Widget:
    """Mark ``widget`` as the lab's primary control (see module docstring)."""
    widget.add_class(PRIMARY_CONTROL)
    return widget


def primary_output(widget: widgets.Widget) -> widgets.Widget:
    """Mark ``widget`` as what the primary control drives."""
    widget.add_class(PRIMARY_OUTPUT)
    return widget


def release_runs() -> None:
    """Free, now, the runs an answer has finished with: call it last in a panel's redraw, once its outputs are sent.

    A simulation leaves its environment, processes and connections in reference cycles, so what a run
    held is freed only by the cyclic collector, and the full collections that free it came once every
    eight to ten answers, each freeing all those runs at once: one answer in eight took 0.5 s longer
    (measured in lab 03's kernel, 2026-11-24). So each answer collects its own run. What is left is then
    frozen (``gc.freeze``: kept out of every later collection, as :func:`~kafka_lab.incident_stats.cached_run`
    does with its runs), so that the next answer's collection walks only what that answer made, not the
    kernel's whole heap (plotly, pandas, the widgets: 0.13 s a collection before anything is frozen).
    Frozen objects are still freed when nothing refers to them; only a cycle among them is kept.
    """
    gc.collect()
    gc.freeze()


def show_figure(fig, out: widgets.Output | None = None) -> None:
    """Show a plotly figure (in ``out`` when given, replacing what it held)."""
    if out is None:
        fig.show()
        return
    with out:
        out.clear_output(wait=True)
        fig.show()

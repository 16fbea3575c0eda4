"""Finding a marked widget (``kafka_lab.ui.primary`` / ``primary_output``) inside a lab's panel, for the lab tests."""


def find(widget, cls):
    """The first widget in ``widget``'s tree (depth first) carrying the DOM class ``cls``, or None."""
    if cls in getattr(widget, "_dom_classes", ()):
        return widget
    for child in getattr(widget, "children", ()):
        hit = find(child, cls)
        if hit is not None:
            return hit
    return None

"""The bundled demo's semantic layer as a catalogue: its catalogue file, as it ships.

The demo is described in the catalogue format every database gets
(`tools/analytics/demo_catalogue.yaml`, read by `tools.analytics.catalogue.demo_catalogue`):
tables, columns with their words and values, foreign keys, metrics as SQL (a ratio as its
numerator and denominator). The semantic layer (`tools.analytics.catalogue`) is built from it;
`bundled_catalogue()` is the same file for reading, exporting (`main.py analytics-catalogue
refresh` without ANALYTICS_DATABASE_URL writes it) and the generic engine (`tools.analytics.ask`).
The demo's own answers come from `tools.analytics.semantic`, whose tuned vocabulary (root causes,
"best"/"worst" per metric) the generic engine does not replace.
"""

from __future__ import annotations

from tools.analytics.catalogue import demo_catalogue
from tools.analytics.catalogue_file import Catalogue


def bundled_catalogue() -> Catalogue:
    """The demo dataset described in the catalogue format (see the module docstring)."""
    return demo_catalogue()

"""One component per capability: opens and closes its engine, its health and metrics.

:mod:`app.components.base` says what a component is; :mod:`app.components.registry` lists them.
"""

"""The ``satchel`` command line, built with typer and rich.

One module per command group (``_tools.py`` for ``satchel tools ...``), shared helpers in
``_common.py``, and the root command with its error boundary in ``_app.py``.
"""

from satchel.cli._app import app, main

__all__ = ["app", "main"]

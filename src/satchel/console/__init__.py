"""The memory console: a web page where a person sees and steers what their agents
remember, and answers their approvals.

Pages rendered on the server (Jinja2, autoescaped) with htmx shipped in the package
(no network, no build step), on the same memory store and approval records as the CLI
and ``satchel serve``:

* agents, and each agent's core and working blocks (size against limit, version, last
  change), edited as the operator; create, archive, load, delete with a confirmation;
* hybrid search of archival memory and conversations with its filters, paged;
* the approvals inbox, polled so new requests appear without a reload;
* a block's history with a diff between two versions; the conversation timeline by
  day; export and import of an agent's memory.

``satchel console`` serves it alone; ``satchel serve --http`` serves it under
``/console`` behind the same token. See ``docs/console.md``.

Example:
    >>> app = console_app(store, broker, token="s3cret")  # doctest: +SKIP
"""

from satchel.console._app import console_app
from satchel.console._guard import Guard
from satchel.console._operator import Operator, operator_store

__all__ = ["Guard", "Operator", "console_app", "operator_store"]

"""The dealer display, supervisor panel and read-only table API (served by ``shoe run --http``).

``roads`` (pure scoreboards), ``state`` (the display state folded from table events), ``app``
(the FastAPI app, the server thread and :func:`start_web`), ``static/`` (the page: plain HTML,
CSS and JavaScript, no build step and nothing fetched from the internet).
"""

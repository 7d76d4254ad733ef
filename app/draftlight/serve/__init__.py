"""`draftlight serve`: the engine behind an OpenAI-compatible HTTP API on localhost.

    schema.py  request validation and the JSON the API answers with (no I/O)
    stops.py   stop sequences over a stream of pieces
    worker.py  the thread that owns the engine, and its queue of requests
    app.py     the routes (FastAPI), streaming over server-sent events
    cli.py     the subcommand: load, bind, serve, shut down on Ctrl-C
"""

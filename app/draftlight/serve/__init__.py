"""`draftlight serve`: the engine behind an OpenAI-compatible HTTP API on localhost.

    schema.py        request validation and the JSON the API answers with (no I/O)
    stops.py         stop sequences over a stream of pieces
    serve_worker.py  the thread that owns the engine, and its queue of requests
    routes.py        the routes, streaming over server-sent events
    guard.py         who may call it (Host, Origin, content type, CORS)
    background.py    the HTTP side on a thread of its own (the window's File ▸ Serve)

The subcommand itself (load, bind, serve, shut down on Ctrl-C) is commands/serve.py.
"""

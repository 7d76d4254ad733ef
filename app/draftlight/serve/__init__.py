"""`draftlight serve`: the engine behind an OpenAI-compatible HTTP API on localhost.

    schema.py        request validation and the JSON the API answers with (no I/O)
    stops.py         stop sequences over a stream of pieces
    serve_worker.py  the thread that owns the engine, and its queue of requests
    routes.py        the routes, streaming over server-sent events
    guard.py         who may call it (Host, Origin, content type, CORS)
    background.py    the HTTP side on a thread of its own (the window's File ▸ Serve), and the
                     uvicorn server both run on (http_server)
    api_error.py     the one error answer (OpenAI's shape)
    file_parts.py    a request's file parts identified, and the bounds on reading them
    file_reading.py  the readers of documents sent as file parts, shared fairly, cancellable
    connections.py   each connection guarded: a deadline for its headers, a cap on how many
    listener.py      the listening socket, which sheds connections it has no descriptor for
    log_limits.py    a bound on the lines serve's loggers write

The subcommand itself (load, bind, serve, shut down on Ctrl-C) is commands/serve.py.
"""

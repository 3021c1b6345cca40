"""The request path: everything between HTTP and the services, a module per job.

``extensions`` the unbound singletons (API, JWT, limiter); ``access`` who may call what;
``blueprint`` the Blueprint every view group uses; ``arguments`` request parsing; ``ratelimits``
counting each request; ``caching`` the answer cache; ``problems`` every error response;
``links`` the base of every link; ``html`` server-rendered pages; ``sessions`` access tokens and
sign-in; ``hooks`` request ids, the access log and per-request headers; ``paths`` path
converters; ``gunicorn_worker`` the server's worker, answering what gunicorn refuses itself.
"""

"""The request path: everything between HTTP and the services, a module per job.

``extensions`` the unbound singletons (API, JWT, limiter); ``access`` who may call what;
``admission`` the one step both paths admit a request by (caller, rule, rate limit, quota,
version); ``blueprint`` the Blueprint every view group uses; ``arguments`` request parsing;
``ratelimits`` the limiter and its counting, ``ratelimit_storage`` its storages and one-trip
strategy, ``client_keys`` the client's key; ``caching`` the answer cache; ``fastpath`` stored
answers served before Flask dispatches; ``versions`` the data version's watch and its copy on
Redis; ``problems`` every error response; ``links`` the base of every link; ``html``
server-rendered pages; ``sessions`` access tokens and sign-in; ``hooks`` request ids, the access
log and per-request headers; ``paths`` path converters; ``gunicorn_worker`` the server's worker,
answering what gunicorn refuses itself.
"""

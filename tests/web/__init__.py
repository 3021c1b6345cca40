"""The request path: access, admission, rate limits, cached answers, errors, parameters, OpenAPI,
serving under gunicorn and nginx."""

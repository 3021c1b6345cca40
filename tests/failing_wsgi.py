"""The app gunicorn serves in the test of what gunicorn answers when the app fails outside Flask,
before its answer began (``servers.gunicorn(..., target="tests.failing_wsgi:app")``): one more
path, ``/fails-outside-flask``, raises in the WSGI layer itself."""

from app import create_app

app = create_app()
served = app.wsgi_app


def failing(environ, start_response):
    if environ.get("PATH_INFO") == "/fails-outside-flask":
        raise RuntimeError("failed outside Flask")
    return served(environ, start_response)


app.wsgi_app = failing

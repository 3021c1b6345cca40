"""Local servers the alerts are sent to, started by the tests: an SMTP server speaking enough of
RFC 5321 for ``smtplib`` (EHLO/HELO, MAIL, RCPT, DATA, RSET, NOOP, QUIT), and an HTTP server
answering ``POST /bot<token>/sendMessage`` as Telegram's Bot API documents it.

Either may be told to answer its next requests otherwise (``script``): an SMTP command a reply
code and text (``451`` to RCPT: try later), the Bot API a status and body (a 429 with
``parameters.retry_after``).
"""

import base64
import email
import email.policy
import itertools
import json
import socketserver
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from tests.helpers import Serving


class _Threading(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


class SmtpServer(Serving):
    """An SMTP server on a free loopback port; ``messages`` holds each accepted message
    (``email.message.EmailMessage``) with its envelope in ``envelopes`` (sender, recipients).

    ``script`` maps a command (``"RCPT"``, ``"DATA"`` for the reply after the data) to a list of
    ``(code, text)`` replies given first, in order; ``"QUIT"`` may be scripted too. Given
    ``credentials`` (user, password), it offers ``AUTH PLAIN`` and takes mail only after them.
    """

    def __init__(self):
        self.messages = []
        self.envelopes = []
        self.commands = []
        self.script = {}
        self.credentials = None
        self.lock = threading.Lock()
        owner = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(self):
                owner._session(self)

        self.server = _Threading(("127.0.0.1", 0), Handler)
        self.host, self.port = self.server.server_address
        self.url = f"smtp://{self.host}:{self.port}"
        self._serve(self.server)

    def _scripted(self, command):
        with self.lock:
            replies = self.script.get(command)
            return replies.pop(0) if replies else None

    def _session(self, handler):
        def reply(code, text):
            handler.wfile.write(f"{code} {text}\r\n".encode())

        reply(220, "alerts-test ESMTP")
        sender, recipients, signed_in = None, [], self.credentials is None
        while line := handler.rfile.readline():
            command = line.decode("ascii", "replace").strip()
            verb = command.split(" ", 1)[0].split(":", 1)[0].upper()
            with self.lock:
                self.commands.append(command)
            scripted = self._scripted(verb) if verb != "DATA" else None
            if scripted:
                reply(*scripted)
                if verb == "QUIT":
                    return
                continue
            if verb == "EHLO":
                auth = b"250-AUTH PLAIN\r\n" if self.credentials else b""
                handler.wfile.write(b"250-alerts-test\r\n" + auth + b"250 8BITMIME\r\n")
            elif verb == "AUTH":
                given = base64.b64decode(command.split()[-1]).split(b"\0")[1:]
                signed_in = [part.decode() for part in given] == list(self.credentials or ())
                reply(*((235, "Authenticated") if signed_in else (535, "Bad credentials")))
            elif verb in ("MAIL", "RCPT", "DATA") and not signed_in:
                reply(530, "Authentication required")
            elif verb in ("HELO", "RSET", "NOOP"):
                reply(250, "OK")
            elif verb == "MAIL":
                sender, recipients = command.split(":", 1)[1].strip(), []
                reply(250, "OK")
            elif verb == "RCPT":
                recipients.append(command.split(":", 1)[1].strip())
                reply(250, "OK")
            elif verb == "DATA":
                reply(354, "End data with <CR><LF>.<CR><LF>")
                lines = []
                while (data := handler.rfile.readline()) not in (b".\r\n", b""):
                    lines.append(data[1:] if data.startswith(b"..") else data)
                scripted = self._scripted("DATA")
                if scripted:
                    reply(*scripted)
                    continue
                message = email.message_from_bytes(b"".join(lines), policy=email.policy.default)
                with self.lock:
                    self.messages.append(message)
                    self.envelopes.append((sender, recipients))
                reply(250, "OK: queued")
            elif verb == "QUIT":
                reply(221, "Bye")
                return
            else:
                reply(502, "Command not implemented")


class BotApi(Serving):
    """Telegram's Bot API on a free loopback port, for the bot ``token``: ``sendMessage`` with a
    JSON body answers ``{"ok": true, "result": Message}``; another token, ``{"ok": false,
    "error_code": 401, ...}``. ``sent`` holds the bodies it accepted, ``requests`` every one."""

    def __init__(self, token):
        self.token = token
        self.sent = []
        self.requests = []
        self.script = []  # (status, body) answered first, in order
        self.lock = threading.Lock()
        self.ids = itertools.count(1)
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                owner._handle(self)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self._serve(self.httpd)

    @staticmethod
    def refusal(status, description, **parameters) -> tuple:
        """An answer of the Bot API refusing a call (``retry_after=N`` for a 429)."""
        body = {"ok": False, "error_code": status, "description": description}
        if parameters:
            body["parameters"] = parameters
        return status, body

    def _handle(self, handler):
        raw = handler.rfile.read(int(handler.headers.get("Content-Length") or 0))
        with self.lock:
            self.requests.append((handler.path, dict(handler.headers), raw))
            scripted = self.script.pop(0) if self.script else None
        if handler.path != f"/bot{self.token}/sendMessage":
            status, body = self.refusal(401, "Unauthorized")
        elif scripted:
            status, body = scripted
        else:
            sent = json.loads(raw)
            with self.lock:
                self.sent.append(sent)
            status = 200
            body = {
                "ok": True,
                "result": {
                    "message_id": next(self.ids),
                    "date": 1795424400,
                    "chat": {"id": sent["chat_id"], "type": "private"},
                    "text": sent["text"],
                },
            }
        data = json.dumps(body).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

"""Sending one alert: by email over SMTP (``smtplib``), or by Telegram's Bot API
(``sendMessage``). Each try gives an :class:`Outcome`, never an exception for the far side's
sake: sent, failed for good, or to be tried again (after at least ``retry_after`` seconds).

SMTP: ``SMTP_URL`` is ``smtp://`` (in the clear), ``smtp+starttls://`` (STARTTLS required) or
``smtps://`` (TLS from the start), with ``user:password@`` when the relay wants a login
(percent-encoded) and a port (25, 587 and 465 by default). A 4xx reply or a lost connection is
tried again, a 5xx reply fails for good. Once the server has accepted the message (its reply to
``DATA``), nothing that follows (``QUIT`` answered oddly, a dropped line) makes it fail: the
message is sent, and trying it again would send it twice.

Telegram: ``POST {TELEGRAM_API_BASE}/bot<token>/sendMessage`` with ``chat_id`` and ``text``.
``{"ok": true}`` sends it; 429 waits ``parameters.retry_after``; 5xx or no answer is tried
again; another refusal (a chat that does not exist, a bot the user blocked) fails for good with
Telegram's ``description``. The bot's token is in the address: no error recorded repeats it.
"""

import json
import smtplib
import ssl
import urllib.error
import urllib.request
from dataclasses import dataclass
from email.message import EmailMessage
from email.utils import formatdate
from http.client import HTTPException
from urllib.parse import unquote, urlsplit

from services.alerts.messages import Alert

#: ``SMTP_URL``'s scheme → the port it defaults to.
SMTP_PORTS = {"smtp": 25, "smtp+starttls": 587, "smtps": 465}

USER_AGENT = "sports-pick-service-alerts/1"


@dataclass(frozen=True)
class Outcome:
    """One try: ``sent``, or why not, and whether a later try may do better."""

    sent: bool
    error: str | None = None
    final: bool = False
    retry_after: float | None = None


def email_message(alert: Alert, sender: str, address: str, message_id: str) -> EmailMessage:
    """The email of ``alert``: plain text, with the one-click unsubscribe headers of RFC 8058
    (``List-Unsubscribe`` with the link, ``List-Unsubscribe-Post``), and the same
    ``Message-ID`` on every try."""
    email = EmailMessage()
    email["From"] = sender
    email["To"] = address
    email["Subject"] = alert.subject
    email["Date"] = formatdate(usegmt=True)
    email["Message-ID"] = message_id
    email["List-Unsubscribe"] = f"<{alert.unsubscribe_url}>"
    email["List-Unsubscribe-Post"] = "List-Unsubscribe=One-Click"
    email["Auto-Submitted"] = "auto-generated"
    email.set_content(alert.text)
    return email


def _smtp_reply(code: int, text) -> Outcome:
    """What an SMTP reply refusing the message means: 5xx for good, anything else later."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    error = f"SMTP {code}: {' '.join(str(text).split())}"[:500]
    return Outcome(False, error, final=500 <= code < 600)


def send_email(alert: Alert, address: str, message_id: str, settings) -> Outcome:
    """One try of ``alert`` to ``address`` through ``SMTP_URL``."""
    url = urlsplit(settings["SMTP_URL"])
    port = url.port or SMTP_PORTS[url.scheme]
    try:
        email = email_message(alert, settings["SMTP_FROM"], address, message_id)
    except (ValueError, TypeError) as refused:  # SMTP_FROM that is no address, say
        return Outcome(False, f"not sent: the message could not be written: {refused}"[:500])
    timeout = settings["ALERT_TIMEOUT"]
    accepted = False
    server = None
    try:
        if url.scheme == "smtps":
            context = ssl.create_default_context()
            server = smtplib.SMTP_SSL(url.hostname, port, timeout=timeout, context=context)
        else:
            server = smtplib.SMTP(url.hostname, port, timeout=timeout)
        if url.scheme == "smtp+starttls":
            server.starttls(context=ssl.create_default_context())
        if url.username:
            server.login(unquote(url.username), unquote(url.password or ""))
        server.send_message(email)
        accepted = True
    except smtplib.SMTPRecipientsRefused as refused:
        code, text = next(iter(refused.recipients.values()))
        return _smtp_reply(code, text)
    except smtplib.SMTPResponseException as reply:
        return _smtp_reply(reply.smtp_code, reply.smtp_error)
    except (smtplib.SMTPException, OSError) as failure:
        return Outcome(False, f"SMTP: {type(failure).__name__}: {failure}"[:500])
    finally:
        if server is not None:
            _close(server)
    return Outcome(accepted)


def _close(server) -> None:
    """Say ``QUIT`` and hang up, whatever the server makes of it."""
    try:
        server.quit()
    except (smtplib.SMTPException, OSError):
        server.close()


def send_telegram(alert: Alert, chat_id: str, settings) -> Outcome:
    """One try of ``alert`` to the Telegram chat ``chat_id`` by the Bot API's ``sendMessage``."""
    base = settings["TELEGRAM_API_BASE"].rstrip("/")
    body = json.dumps(
        {
            "chat_id": int(chat_id),
            "text": f"{alert.subject}\n\n{alert.text}",
            "link_preview_options": {"is_disabled": True},
        }
    ).encode()
    request = urllib.request.Request(
        f"{base}/bot{settings['TELEGRAM_BOT_TOKEN']}/sendMessage",
        data=body,
        method="POST",
        headers={"Content-Type": "application/json", "User-Agent": USER_AGENT},
    )
    try:
        with urllib.request.urlopen(request, timeout=settings["ALERT_TIMEOUT"]) as answer:
            status, raw = answer.status, answer.read()
    except urllib.error.HTTPError as refusal:
        with refusal:
            status, raw = refusal.code, refusal.read()
    except (OSError, HTTPException) as failure:
        # The address holds the token: the reason's class only, never its text.
        return Outcome(False, f"Telegram: no answer ({type(failure).__name__})")
    try:
        answer = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        answer = {}
    if not isinstance(answer, dict):
        answer = {}
    if 200 <= status < 300 and answer.get("ok") is True:
        return Outcome(True)
    description = str(answer.get("description") or "no description")[:300]
    error = f"Telegram {status}: {description}"
    if status == 429:
        parameters = answer.get("parameters")
        wait = parameters.get("retry_after") if isinstance(parameters, dict) else None
        seconds = float(wait) if isinstance(wait, int | float) and wait >= 0 else None
        return Outcome(False, error, retry_after=seconds)
    return Outcome(False, error, final=400 <= status < 500)

"""The one way out to the internet: a webhook's address checked against server-side request
forgery, and a POST to exactly the address that was checked.

A URL is refused unless it is ``https`` (``http`` too outside production) and every address its
host resolves to is public: no loopback, private, link-local, multicast, reserved, unspecified or
cloud metadata address, in IPv4 or IPv6 (an IPv4 address written inside an IPv6 one counts as
the IPv4 address). It is checked when an endpoint is registered and again before every delivery,
since a name may resolve elsewhere tomorrow; the connection then goes to the address just
checked (the name still travels in ``Host`` and in TLS's SNI, and names the certificate), so a
second lookup cannot swap in another. Redirects are never followed: a 3xx is a failed attempt.

Its port must be one of ``allowed_ports`` (``WEBHOOK_ALLOWED_PORTS``: 443 and 80 by default), so
the service cannot be pointed at a public host's other services (mail, databases, SSH) or used
to find which of its ports answer.

``allow_private`` (``WEBHOOK_ALLOW_PRIVATE``, refused in production) lets loopback, private and
link-local addresses through for development and tests, on any port (a receiver on a
development machine's own port); metadata addresses never pass.
"""

import concurrent.futures
import contextlib
import heapq
import http.client
import ipaddress
import itertools
import re
import socket
import ssl
import threading
import time
from dataclasses import dataclass
from urllib.parse import quote, urlsplit

from errors import WebhookUrlRefused

#: Addresses of cloud instance-metadata services, refused even when private ones are allowed.
METADATA_NETWORKS = tuple(
    ipaddress.ip_network(network)
    for network in (
        "169.254.169.254/32",  # AWS, GCP, Azure, OpenStack, DigitalOcean…
        "169.254.170.2/32",  # AWS ECS task metadata
        "fd00:ec2::254/128",  # AWS over IPv6
        "100.100.100.200/32",  # Alibaba Cloud
        "168.63.129.16/32",  # Azure wire server
    )
)

#: IPv6 prefixes that carry an IPv4 address in their last 32 bits (NAT64).
NAT64 = ipaddress.ip_network("64:ff9b::/96")

#: The classes ``allow_private`` lets through.
PRIVATE_CLASSES = frozenset({"loopback", "private", "link-local"})

#: The ports a webhook URL may name unless configured otherwise (``WEBHOOK_ALLOWED_PORTS``).
DEFAULT_PORTS = frozenset({443, 80})

#: How much of a receiver's answer is read: the status is what counts, the body is only logged.
MAX_ANSWER_BYTES = 4096

MAX_URL_LENGTH = 2048

#: What a URL may not hold as written: whitespace and control characters. (urlsplit drops tabs
#: and line breaks without a word, and http.client refuses the rest at every delivery.)
UNWRITTEN = re.compile(r"[\x00-\x20\x7f]")

#: The characters a request line carries as they are; any other (non-ASCII text in a path or
#: query) is sent percent-encoded as UTF-8, as a browser sends it.
SENT_AS_IS = "".join(chr(code) for code in range(0x21, 0x7F))

#: How long a host name may take to resolve: a stalled resolver never holds a request longer.
RESOLVE_SECONDS = 5

#: Where names are resolved (the system's resolver has no timeout of its own).
_resolver = concurrent.futures.ThreadPoolExecutor(4, thread_name_prefix="webhook-dns")


@dataclass(frozen=True)
class Target:
    """A checked URL: where to connect (the addresses just checked) and what to ask for."""

    scheme: str
    host: str
    port: int
    path: str  # path and query, as sent in the request line
    addresses: tuple[str, ...]
    private: bool = False  # every address one ``allow_private`` let through


@dataclass(frozen=True)
class Answer:
    """What a receiver answered: its status and ``Retry-After`` header (None if absent)."""

    status: int
    retry_after: str | None
    body: bytes


def address_class(address) -> str | None:
    """Why ``address`` (an ``ipaddress`` object) is not public, or None when it is."""
    if isinstance(address, ipaddress.IPv6Address):
        embedded = address.ipv4_mapped or address.sixtofour
        if embedded is None and address in NAT64:
            embedded = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
        if embedded is not None:
            return address_class(embedded)
    if any(address in network for network in METADATA_NETWORKS):
        return "metadata"
    if address.is_unspecified:
        return "unspecified"
    if address.is_loopback:
        return "loopback"
    if address.is_link_local:
        return "link-local"
    if address.is_multicast:
        return "multicast"
    if address.is_reserved:
        return "reserved"
    if address.is_private:
        return "private"
    if not address.is_global:
        return "reserved"  # shared (100.64.0.0/10) and other special-purpose ranges
    return None


def resolve(host: str, port: int) -> tuple[str, ...]:
    """Every address ``host`` names (itself when it is an address), or WebhookUrlRefused."""
    try:
        return (str(ipaddress.ip_address(host)),)
    except ValueError:
        pass
    lookup = _resolver.submit(socket.getaddrinfo, host, port, type=socket.SOCK_STREAM)
    try:
        found = lookup.result(timeout=RESOLVE_SECONDS)
    except (OSError, UnicodeError) as exc:
        raise WebhookUrlRefused(f"the host {host} does not resolve") from exc
    except concurrent.futures.TimeoutError as exc:
        raise WebhookUrlRefused(
            f"the host {host} did not resolve within {RESOLVE_SECONDS} s"
        ) from exc
    # getaddrinfo may add an IPv6 scope (fe80::1%eth0); the address is what precedes it.
    return tuple(dict.fromkeys(info[4][0].split("%")[0] for info in found))


def check(
    url: str, *, allow_private: bool, require_https: bool, allowed_ports=DEFAULT_PORTS
) -> Target:
    """The target ``url`` names, once its scheme, every address of its host and its port pass;
    else WebhookUrlRefused saying why."""
    if len(url) > MAX_URL_LENGTH:
        raise WebhookUrlRefused(f"it is longer than {MAX_URL_LENGTH} characters")
    if UNWRITTEN.search(url):
        raise WebhookUrlRefused("it holds a space or a control character (percent-encode it)")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise WebhookUrlRefused(f"it is not a valid URL ({exc})") from exc
    schemes = ("https",) if require_https else ("https", "http")
    if parts.scheme not in schemes:
        raise WebhookUrlRefused(f"the scheme must be {' or '.join(schemes)}")
    if not parts.hostname:
        raise WebhookUrlRefused("it names no host")
    if parts.username is not None or parts.password is not None:
        raise WebhookUrlRefused("it carries a user name or password")
    if port == 0:
        raise WebhookUrlRefused("its port must be between 1 and 65535")
    port = port or (443 if parts.scheme == "https" else 80)
    host = parts.hostname
    addresses = resolve(host, port)
    private = True
    for address in addresses:
        refused = address_class(ipaddress.ip_address(address))
        if refused is None:
            private = False
            continue
        if allow_private and refused in PRIVATE_CLASSES:
            continue
        named = "" if address == host else f" ({host} resolves to it)"
        article = "an" if refused[0] in "aeiou" else "a"
        raise WebhookUrlRefused(f"{address} is {article} {refused} address{named}")
    if port not in allowed_ports and not private:
        ports = ", ".join(str(number) for number in sorted(allowed_ports, reverse=True))
        raise WebhookUrlRefused(f"its port must be one of {ports} (it is {port})")
    path = parts.path or "/"
    if parts.query:
        path += f"?{parts.query}"
    return Target(parts.scheme, host, port, quote(path, safe=SENT_AS_IS), addresses, private)


class _PinnedHTTPConnection(http.client.HTTPConnection):
    """An HTTP connection to a checked address, whatever the host name resolves to now."""

    def __init__(self, target: Target, address: str, timeout: float):
        super().__init__(target.host, target.port, timeout=timeout)
        self.address = address

    def connect(self):
        self.sock = socket.create_connection((self.address, self.port), self.timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class _PinnedHTTPSConnection(http.client.HTTPSConnection):
    """HTTPS to a checked address; the certificate must still name the host."""

    def __init__(self, target: Target, address: str, timeout: float):
        super().__init__(
            target.host, target.port, timeout=timeout, context=ssl.create_default_context()
        )
        self.address = address

    def connect(self):
        sock = socket.create_connection((self.address, self.port), self.timeout)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock = self._context.wrap_socket(sock, server_hostname=self.host)


class _Watchdog:
    """One thread that ends connections past their deadline (rather than a timer per request):
    a pending read or write of a connection it cuts fails at once."""

    def __init__(self):
        self.waiting = []  # a heap of (deadline, number, connection)
        self.numbers = itertools.count()
        self.changed = threading.Condition()
        self.thread = None

    def watch(self, connection, seconds: float):
        """Cut ``connection`` in ``seconds`` unless it is released first; returns its entry."""
        entry = [time.monotonic() + seconds, next(self.numbers), connection]
        with self.changed:
            heapq.heappush(self.waiting, entry)
            if self.thread is None or not self.thread.is_alive():
                self.thread = threading.Thread(target=self.run, name="webhook-deadlines")
                self.thread.daemon = True
                self.thread.start()
            self.changed.notify()
        return entry

    def release(self, entry) -> None:
        """The connection is done: nothing to cut."""
        entry[2] = None

    def run(self):
        while True:
            with self.changed:
                while self.waiting and self.waiting[0][2] is None:
                    heapq.heappop(self.waiting)
                if not self.waiting:
                    self.changed.wait(60)
                    continue
                wait = self.waiting[0][0] - time.monotonic()
                if wait > 0:
                    self.changed.wait(wait)
                    continue
                connection = heapq.heappop(self.waiting)[2]
            sock = connection.sock
            if sock is not None:
                with contextlib.suppress(OSError):  # already closed
                    sock.shutdown(socket.SHUT_RDWR)


_watchdog = _Watchdog()


def post(target: Target, body: bytes, headers: dict, timeout: float) -> Answer:
    """POST ``body`` to the checked ``target`` (its first address), never following a redirect.

    ``timeout`` bounds the whole exchange, not each read: a receiver that drips its answer a
    byte at a time is cut off when it runs out. Raises OSError (or an ``http.client`` error)
    when no complete answer comes.
    """
    kind = _PinnedHTTPSConnection if target.scheme == "https" else _PinnedHTTPConnection
    connection = kind(target, target.addresses[0], timeout)
    deadline = _watchdog.watch(connection, timeout)
    try:
        connection.request("POST", target.path, body=body, headers=headers)
        response = connection.getresponse()
        answer = response.read(MAX_ANSWER_BYTES)
        return Answer(response.status, response.getheader("Retry-After"), answer)
    finally:
        _watchdog.release(deadline)
        connection.close()

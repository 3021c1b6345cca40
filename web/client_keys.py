"""The client's key: the one spelling of an address every policy counting by address keys on
(IPv4's classic spellings read as the address they name, IPv6 counted by its network)."""

import ipaddress
import re
import socket

#: The longest address string counted as given when it is no address at all (the proxy in front
#: reported something else): longer ones are cut, so no counter's key grows without bound.
MAX_UNPARSED_ADDRESS = 64


#: The parts of an address ``inet_aton`` reads: one to four numbers, decimal, octal or hex.
CLASSIC_IPV4 = re.compile(r"(?:0[xX][0-9a-fA-F]+|[0-9]+)(?:\.(?:0[xX][0-9a-fA-F]+|[0-9]+)){0,3}")


def client_key(address: str | None, ipv6_prefix: int) -> str:
    """The rate-limit counter of a client at ``address`` (``REMOTE_ADDR``; None counts as
    127.0.0.1): every policy counting by address, on the full path and the fast path, keys on it.

    One client, one key. An address is read in one spelling (``ipaddress``'s: leading zeros and
    letter case gone; IPv4's classic spellings, ``127.1`` or octal, read as the address they
    name), without the brackets, port or zone (``%eth0``) a proxy may report with it;
    an IPv4-mapped IPv6 address (``::ffff:192.0.2.1``) counts as its IPv4 address; and an IPv6
    address counts by its network of ``ipv6_prefix`` bits (``RATELIMIT_IPV6_PREFIX``, 64: what
    one subscriber is given), since a client holding a /64 may send from any address in it.
    """
    text = (address or "127.0.0.1").strip()
    parsed = _address(text)
    if parsed is None:
        return f"ip:{text[:MAX_UNPARSED_ADDRESS]}"
    if parsed.version == 6 and parsed.ipv4_mapped is not None:
        parsed = parsed.ipv4_mapped
    if parsed.version == 4:
        return f"ip:{parsed}"
    network = ipaddress.IPv6Network((int(parsed), ipv6_prefix), strict=False)
    return f"ip:{network}"


def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """``text`` as an address (brackets, a port and a zone dropped), or None when it is none."""
    if text.startswith("["):  # [2001:db8::1] or [2001:db8::1]:443
        text, closed, _port = text[1:].partition("]")
        if not closed:
            return None
    elif text.count(":") == 1:  # 192.0.2.1:443
        text = text.partition(":")[0]
    text = text.partition("%")[0]
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return _classic_ipv4(text)


def _classic_ipv4(text: str) -> ipaddress.IPv4Address | None:
    """An IPv4 address in one of the spellings C's ``inet_aton`` reads and ``ipaddress`` does
    not (``127.1``, octal ``0177.0.0.1``, hex ``0x7f.0.0.1``, one number ``2130706433``), which
    a network stack takes for the same host; None for anything else."""
    if not CLASSIC_IPV4.fullmatch(text):
        return None
    try:
        return ipaddress.IPv4Address(socket.inet_aton(text))
    except OSError:
        return None

"""Server-side request forgery: every address class refused, a name that resolves to loopback
too, and a POST that goes to the checked address and follows no redirect."""

import pytest

from errors import WebhookUrlRefused
from services.webhooks import egress
from tests.receiver import receiving


def refused(url, allow_private=False, require_https=False) -> str:
    with pytest.raises(WebhookUrlRefused) as caught:
        egress.check(url, allow_private=allow_private, require_https=require_https)
    return caught.value.errors["url"][0]


@pytest.mark.parametrize(
    ("url", "kind"),
    [
        ("http://127.0.0.1/hook", "a loopback"),
        ("http://127.8.9.10:8080/hook", "a loopback"),
        ("http://[::1]/hook", "a loopback"),
        ("http://10.1.2.3/hook", "a private"),
        ("http://172.16.0.1/hook", "a private"),
        ("http://192.168.1.20/hook", "a private"),
        ("http://[fd12:3456::1]/hook", "a private"),
        ("http://169.254.10.1/hook", "a link-local"),
        ("http://[fe80::1]/hook", "a link-local"),
        ("http://224.0.0.251/hook", "a multicast"),
        ("http://[ff02::1]/hook", "a multicast"),
        ("http://169.254.169.254/latest/meta-data", "a metadata"),
        ("http://[fd00:ec2::254]/", "a metadata"),
        ("http://100.100.100.200/", "a metadata"),
        ("http://0.0.0.0/hook", "an unspecified"),
        ("http://[::]/hook", "an unspecified"),
        ("http://240.0.0.1/hook", "a reserved"),
        ("http://100.64.0.1/hook", "a reserved"),
        # IPv4 inside IPv6 (mapped, NAT64, 6to4) is judged as the IPv4 address it carries.
        ("http://[::ffff:127.0.0.1]/hook", "a loopback"),
        ("http://[::ffff:169.254.169.254]/", "a metadata"),
        ("http://[64:ff9b::a9fe:a9fe]/", "a metadata"),
        ("http://[2002:7f00:1::]/hook", "a loopback"),
    ],
)
def test_every_address_class_is_refused(url, kind):
    assert f" is {kind} address" in refused(url)


def test_a_name_that_resolves_to_loopback_is_refused():
    assert refused("http://localhost:8080/hook").endswith(
        "is a loopback address (localhost resolves to it)"
    )


def test_a_name_that_does_not_resolve_is_refused():
    assert refused("https://no-such-host.invalid/hook") == (
        "the host no-such-host.invalid does not resolve"
    )


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("ftp://93.184.216.34/hook", "the scheme must be https or http"),
        ("file:///etc/passwd", "the scheme must be https or http"),
        ("gopher://93.184.216.34:70/", "the scheme must be https or http"),
        ("http:///hook", "it names no host"),
        ("http://user:secret@93.184.216.34/hook", "it carries a user name or password"),
        ("http://93.184.216.34:99999/", "it is not a valid URL (Port out of range 0-65535)"),
        ("https://example.com/" + "a" * 2048, "it is longer than 2048 characters"),
        ("http://93.184.216.34:0/hook", "its port must be between 1 and 65535"),
    ]
    + [
        (url, "it holds a space or a control character (percent-encode it)")
        for url in (
            "http://93.184.216.34/a b",
            "http://93.184.216.34/hook\r\nX-Injected: 1",
            "http://93.184.216.34/hook\tx",
            "http://93.184.216.34/hook?a=\x00",
            "http://93.184.216.34/hook\x7f",
            " http://93.184.216.34/hook",
        )
    ],
)
def test_urls_that_are_not_webhook_urls_are_refused(url, why):
    assert refused(url) == why


def test_production_takes_https_only():
    assert refused("http://93.184.216.34/hook", require_https=True) == "the scheme must be https"
    target = egress.check("https://93.184.216.34/hook?a=1", allow_private=False, require_https=True)
    assert (target.scheme, target.port, target.path) == ("https", 443, "/hook?a=1")
    assert target.addresses == ("93.184.216.34",)


def test_text_beyond_ascii_in_a_path_is_sent_percent_encoded():
    """A request line is ASCII: http.client raised UnicodeEncodeError at every delivery."""
    with receiving(path="/hooks/équipe") as receiver:
        target = egress.check(receiver.url + "?nom=Zoë", allow_private=True, require_https=False)
        assert target.path == "/hooks/%C3%A9quipe?nom=Zo%C3%AB"
        answer = egress.post(target, b"{}", {"Content-Type": "application/json"}, timeout=5)
    assert answer.status == 200 and len(receiver.received) == 1
    already = egress.check(
        "http://93.184.216.34/a%20b?q=%C3%A9", allow_private=False, require_https=False
    )
    assert already.path == "/a%20b?q=%C3%A9"  # what is encoded already stays as it is


def test_allowing_private_addresses_never_allows_metadata():
    for url in ("http://127.0.0.1:9/hook", "http://localhost:9/", "http://10.0.0.1/"):
        assert egress.check(url, allow_private=True, require_https=False).addresses
    assert refused("http://169.254.169.254/", allow_private=True).endswith("metadata address")
    assert refused("http://224.0.0.1/", allow_private=True).endswith("multicast address")


def test_a_post_goes_to_the_checked_address_and_follows_no_redirect():
    with receiving() as receiver:
        receiver.answers = [(302, {"Location": "http://169.254.169.254/"}), 204]
        target = egress.check(receiver.url, allow_private=True, require_https=False)
        first = egress.post(target, b"{}", {"Content-Type": "application/json"}, timeout=5)
        second = egress.post(target, b"{}", {"Content-Type": "application/json"}, timeout=5)
    assert (first.status, second.status) == (302, 204)
    assert len(receiver.received) == 2  # nothing went to the redirect's target


def test_a_receiver_that_does_not_answer_in_time_is_cut_off():
    with receiving() as receiver:
        receiver.answers = ["hang"]
        target = egress.check(receiver.url, allow_private=True, require_https=False)
        with pytest.raises(OSError):
            egress.post(target, b"{}", {}, timeout=0.5)

"""Joining the table from a phone: this machine's LAN addresses, the page's URL on the LAN,
and its QR code for the terminal and for the page (`/qr.svg`)."""

from __future__ import annotations

import io
import ipaddress

import ifaddr
import segno

from tidetower.mqtt.settings import is_loopback

EVERY_ADDRESS = ("0.0.0.0", "::", "")


def lan_addresses() -> list[str]:
    """This machine's IPv4 addresses that another machine on the LAN can reach (loopback and
    link-local left out), private ones first."""
    found: list[ipaddress.IPv4Address] = []
    for adapter in ifaddr.get_adapters():
        for ip in adapter.ips:
            if not isinstance(ip.ip, str):  # an IPv6 address comes as a tuple
                continue
            address = ipaddress.IPv4Address(ip.ip)
            if not (address.is_loopback or address.is_link_local) and address not in found:
                found.append(address)
    return [str(a) for a in sorted(found, key=lambda a: not a.is_private)]


def join_urls(bind: str, port: int) -> list[str]:
    """The page's URLs for the other players' phones: none when it serves this machine only."""
    if is_loopback(bind):
        return []
    hosts = lan_addresses() if bind in EVERY_ADDRESS else [bind]
    return [f"http://{host}:{port}/" for host in hosts]


def qr_text(url: str) -> str:
    """The QR code of `url` drawn with block characters, for a terminal."""
    out = io.StringIO()
    segno.make(url, error="m").terminal(out=out, compact=True)
    return out.getvalue()


def qr_svg(url: str) -> bytes:
    """The QR code of `url` as an SVG image, for the page's join element."""
    out = io.BytesIO()
    segno.make(url, error="m").save(out, kind="svg", scale=6, border=2, title=url)
    return out.getvalue()

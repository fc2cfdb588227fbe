"""The network a distributed job uses: which interface reaches the rendezvous host, and from which
address (read from /proc/net/route and the socket layer; the smoke records it as evidence)."""

from __future__ import annotations

import ipaddress
import socket
import struct
from typing import Any, Dict, List, Optional


def parse_route_table(text: str) -> List[Dict[str, Any]]:
    """/proc/net/route rows: iface, destination, mask (IPv4Address/int), gateway, metric."""
    rows = []
    for line in text.splitlines()[1:]:
        f = line.split()
        if len(f) < 8:
            continue
        try:
            dest, gw, flags, metric, mask = int(f[1], 16), int(f[2], 16), int(f[3], 16), int(f[6]), int(f[7], 16)
        except ValueError:
            continue
        if not flags & 0x1:  # RTF_UP
            continue
        # the kernel prints the addresses in host (little-endian on x86/arm) byte order
        to_ip = lambda v: ipaddress.IPv4Address(struct.pack("<I", v))  # noqa: E731
        rows.append(
            {
                "iface": f[0],
                "destination": to_ip(dest),
                "mask": to_ip(mask),
                "gateway": to_ip(gw),
                "metric": metric,
                "prefix": bin(mask).count("1"),
            }
        )
    return rows


def route_interface(ip: str, route_text: str) -> Optional[str]:
    """The interface of the most specific IPv4 route to ip in a /proc/net/route table (None if none)."""
    try:
        addr = ipaddress.IPv4Address(ip)
    except ValueError:
        return None
    if addr.is_loopback:
        return "lo"
    best = None
    for r in parse_route_table(route_text):
        if int(addr) & int(r["mask"]) == int(r["destination"]) & int(r["mask"]):
            key = (r["prefix"], -r["metric"])
            if best is None or key > best[0]:
                best = (key, r["iface"])
    return best[1] if best else None


def _resolve(host: str) -> Optional[str]:
    try:
        infos = socket.getaddrinfo(host, None, socket.AF_INET, socket.SOCK_STREAM)
        return str(infos[0][4][0]) if infos else None  # AF_INET: (address, port)
    except (OSError, UnicodeError):
        return None


def _local_ip_towards(ip: str, port: int) -> Optional[str]:
    """The source address the kernel picks to reach ip (a UDP connect sends no packet)."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect((ip, port))
            return s.getsockname()[0]
    except OSError:
        return None


def network_info(master_addr: str, master_port: int, backend: str, environ) -> Dict[str, Any]:
    """Which interface this rank uses: the *_SOCKET_IFNAME a library will obey, else the route to MASTER_ADDR."""
    ip = _resolve(master_addr)
    info: Dict[str, Any] = {
        "master_addr": master_addr,
        "master_ip": ip,
        "local_ip": None,
        "interface": None,
        "source": None,
        "nccl_socket_ifname": environ.get("NCCL_SOCKET_IFNAME"),
        "gloo_socket_ifname": environ.get("GLOO_SOCKET_IFNAME"),
    }
    if ip:
        info["local_ip"] = _local_ip_towards(ip, master_port)
    var = "NCCL_SOCKET_IFNAME" if backend == "nccl" else "GLOO_SOCKET_IFNAME"
    if environ.get(var):
        info.update(interface=environ[var], source=var)
        return info
    if ip:
        try:
            with open("/proc/net/route") as f:
                route = f.read()
        except OSError:
            route = ""
        iface = route_interface(ip, route)
        if iface:
            info.update(interface=iface, source="route to MASTER_ADDR (/proc/net/route)")
    if backend == "nccl":
        info["note"] = (
            "NCCL picks its own interface when NCCL_SOCKET_IFNAME is unset (it skips lo and docker* "
            "unless nothing else is up); NCCL_DEBUG=INFO prints the one it chose"
        )
    return info

"""The port ``./run.sh`` serves on: the one asked for, or the next free one when it is taken.

    python tools/free_port.py 8888 [host]    # prints the port to use; says on stderr when it moved

Like Jupyter's own ``port_retries`` (it tries the next 50 ports), but decided *before* the server
starts, so that the URL run.sh prints is the one the server really gets (run.sh then starts the
server on exactly that port, with ``--ServerApp.port_retries=0``).
"""

from __future__ import annotations

import socket
import sys

RETRIES = 50


def parse_port(text: str) -> int:
    """A TCP port from its text; ValueError saying what is accepted otherwise."""
    try:
        port = int(text)
    except (TypeError, ValueError):
        raise ValueError(f"a port is a number from 1 to 65535, not {text!r}") from None
    if not 1 <= port <= 65535:
        raise ValueError(f"a port is a number from 1 to 65535, not {port}")
    return port


def is_free(port: int, host: str = "127.0.0.1") -> bool:
    """Whether a server could bind ``host:port`` now (as Jupyter binds it: without SO_REUSEPORT)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def free_port(port: int, host: str = "127.0.0.1", retries: int = RETRIES) -> int:
    """``port`` if free, else the first free one of the next ``retries``; OSError when none is."""
    for candidate in range(port, min(port + retries, 65535) + 1):
        if is_free(candidate, host):
            return candidate
    raise OSError(f"ports {port} to {min(port + retries, 65535)} on {host} are all taken")


def main(argv: list[str]) -> int:
    if len(argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    host = argv[2] if len(argv) == 3 else "127.0.0.1"
    try:
        wanted = parse_port(argv[1])
        port = free_port(wanted, host)
    except (ValueError, OSError) as exc:
        print(f"run.sh: {exc}", file=sys.stderr)
        return 1
    if port != wanted:
        print(f"run.sh: port {wanted} is taken, using {port}", file=sys.stderr)
    print(port)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

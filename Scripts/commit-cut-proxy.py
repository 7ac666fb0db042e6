#!/usr/bin/env python3
"""A TCP proxy between prefsd hosts and PostgreSQL that loses a commit's answer on purpose.

Every connection is passed through unchanged until the proxy is armed (a line `arm` on its
standard input). Armed, it watches for a client that sends a statement naming `prefsd_commit`
(a group commit), and from then on reads that connection's answers from the server message by
message: at the first ReadyForQuery that says the session is idle again — the batch's
transaction has committed, inside a procedure or by its COMMIT — it closes both sides instead
of passing that answer on (nothing of it: the messages before its ReadyForQuery are held back). The host never reads the answer of a commit that took place. Then it
prints `cut` and is disarmed until the next `arm`.

    python3 Scripts/commit-cut-proxy.py --target 127.0.0.1:5432
    # prints `listening PORT`; then `arm` on stdin, answered `armed` once it holds, and
    # `cut` on stdout per cut

Loopback only; it stops when its standard input closes.
"""
import argparse
import socket
import struct
import sys
import threading

armed = threading.Event()
lock = threading.Lock()


def say(line):
    with lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def close(*sockets):
    for s in sockets:
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        s.close()


class Pair:
    """One client connection and its connection to the server."""

    def __init__(self, client, server):
        self.client = client
        self.server = server
        self.committing = False
        self.sent = b""

    def client_to_server(self):
        try:
            while True:
                data = self.client.recv(65536)
                if not data:
                    break
                window = self.sent[-32:] + data
                self.sent = window
                if armed.is_set() and b"prefsd_commit" in window:
                    self.committing = True
                self.server.sendall(data)
        except OSError:
            pass
        close(self.client, self.server)

    def server_to_client(self):
        pending = b""
        held = b""
        try:
            while True:
                data = self.server.recv(65536)
                if not data:
                    break
                if not self.committing:
                    self.client.sendall(data)
                    continue
                pending += data
                # Hold each answer back whole, up to its ReadyForQuery: one that leaves the
                # session idle ends the commit, and none of it is passed on; any other is.
                while len(pending) >= 5:
                    length = struct.unpack("!I", pending[1:5])[0]
                    if len(pending) < 1 + length:
                        break
                    message, pending = pending[: 1 + length], pending[1 + length :]
                    held += message
                    if message[0:1] != b"Z":
                        continue
                    if message[5:6] == b"I" and armed.is_set():
                        armed.clear()
                        close(self.client, self.server)
                        say("cut")
                        return
                    self.client.sendall(held)
                    held = b""
        except OSError:
            pass
        close(self.client, self.server)


def serve(listener, target):
    while True:
        try:
            client, _ = listener.accept()
        except OSError:
            return
        try:
            server = socket.create_connection(target)
        except OSError:
            client.close()
            continue
        for s in (client, server):
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        pair = Pair(client, server)
        threading.Thread(target=pair.client_to_server, daemon=True).start()
        threading.Thread(target=pair.server_to_client, daemon=True).start()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", required=True, help="the PostgreSQL server, HOST:PORT (loopback)")
    args = parser.parse_args()
    host, port = args.target.rsplit(":", 1)
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    threading.Thread(target=serve, args=(listener, (host, int(port))), daemon=True).start()
    say("listening %d" % listener.getsockname()[1])
    for line in sys.stdin:
        if line.strip() == "arm":
            armed.set()
            say("armed")
    listener.close()


if __name__ == "__main__":
    main()

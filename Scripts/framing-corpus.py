#!/usr/bin/env python3
"""Sends prefsd a corpus of raw requests a schema-driven fuzzer cannot send, because it frames
every body itself: malformed body framing on every endpoint that takes a body (chunk sizes that
are not hex, negative or overflowing; chunks longer or shorter than declared; no final chunk;
malformed trailers; Content-Length beside chunked, twice, or not a number; a body cut short),
`Connection` lists, HTTP/1.0, numbers beyond 64 bits or beyond what is kept exactly, a batch
`null`, a watch `since` beyond the newest revision.

Every request must be answered below 500, or have its connection closed. Prints each 5xx with its
request to stderr, and on stdout one line: the number of requests, then the number of 5xx.
Exits 1 if there was any 5xx. Scripts/fuzz.sh runs it as its third pass.

    python3 Scripts/framing-corpus.py --socket PATH
"""
import argparse
import json
import socket
import sys


def exchange(path, raw, hang_up=False):
    """Sends `raw` on a new connection (closing the sending side after it if `hang_up`) and
    returns the status of the first answer, or 0 if the connection closed without one."""
    connection = socket.socket(socket.AF_UNIX)
    connection.settimeout(5)
    connection.connect(path)
    connection.sendall(raw.encode())
    if hang_up:
        connection.shutdown(socket.SHUT_WR)
    data = b""
    try:
        while b"\r\n" not in data:
            chunk = connection.recv(65536)
            if not chunk:
                break
            data += chunk
    except socket.timeout:
        pass
    connection.close()
    if not data.startswith(b"HTTP/"):
        return 0
    return int(data.split(b" ", 2)[1])


def request(method, target, headers="", body=""):
    return "%s %s HTTP/1.1\r\nHost: prefsd\r\nConnection: close\r\n%s\r\n%s" % (method, target, headers, body)


def json_request(method, target, body):
    return request(method, target, "Content-Length: %d\r\n" % len(body.encode()), body)


def created_draft(path):
    connection = socket.socket(socket.AF_UNIX)
    connection.connect(path)
    connection.sendall(json_request("POST", "/v1/drafts", '{"account":"fuzz","text":"x"}').encode())
    data = b""
    while True:
        chunk = connection.recv(65536)
        if not chunk:
            break
        data += chunk
    connection.close()
    return json.loads(data.split(b"\r\n\r\n", 1)[1])["id"]


def framings(body):
    """(framing headers, bytes after the head, whether the client then hangs up) for `body`."""
    n = len(body.encode())
    chunked = "Transfer-Encoding: chunked\r\n"
    return [
        (chunked, "zz\r\n%s\r\n0\r\n\r\n" % body, False),
        (chunked, "-%x\r\n%s\r\n0\r\n\r\n" % (n, body), False),
        (chunked, "FFFFFFFFFFFFFFFFFFFFFF\r\n%s\r\n0\r\n\r\n" % body, False),
        (chunked, "%x\r\n%s\r\n0\r\n\r\n" % (n - 2, body), False),
        (chunked, "%x\r\n%s\r\n0\r\n\r\n" % (n + 40, body), True),
        (chunked, "%x\r\n%s\r\n" % (n, body), True),
        (chunked, "%x\r\n%s\r\n0\r\nnot a field\r\n\r\n" % (n, body), False),
        (chunked, "%x x\r\n%s\r\n0\r\n\r\n" % (n, body), False),
        (chunked, "%x\r\n%s\r\n0\r\nX-Trailer: 1\r\n\r\n" % (n, body), False),
        ("Content-Length: %d\r\n" % n + chunked, "%x\r\n%s\r\n0\r\n\r\n" % (n, body), False),
        ("Content-Length: %d\r\nContent-Length: %d\r\n" % (n, n + 1), body, False),
        ("Content-Length: 1x\r\n", body, False),
        ("Content-Length: %d\r\n" % (n + 100), body, True),
    ]


def corpus(path):
    draft = created_draft(path)
    endpoints = [
        ("PUT", "/v1/prefs/fuzz.framing", "4242"),
        ("POST", "/v1/prefs:batch", '{"operations":[{"op":"set","key":"fuzz.framing","value":1}]}'),
        ("PUT", "/v1/schema/fuzz.framing", '{"type":"int"}'),
        ("POST", "/v1/load", '{"format":1,"values":[{"key":"fuzz.framing","scope":"/","value":7}]}'),
        ("POST", "/v1/drafts", '{"account":"fuzz","text":"x"}'),
        ("POST", "/v1/drafts/%s/attachments?filename=a.bin" % draft, "bytes " * 40),
    ]
    cases = []
    for method, target, body in endpoints:
        for headers, raw_body, hang_up in framings(body):
            cases.append((request(method, target, headers, raw_body), hang_up))
    for connection in ["close, TE", "keep-alive, close", "CLOSE", "keep-alive"]:
        for target in ["/v1/prefs/fuzz.framing", "/v1/status"]:
            cases.append(("GET %s HTTP/1.1\r\nConnection: %s\r\n\r\n" % (target, connection), True))
    for target in ["/v1/prefs/fuzz.framing", "/v1/status", "/v1/watch?key=fuzz.framing"]:
        cases.append(("GET %s HTTP/1.0\r\n\r\n" % target, True))
    cases.append((request("GET", "/v1/watch?since=999999999"), False))
    cases.append((request("GET", "/v1/watch", "Last-Event-ID: 999999999\r\n"), False))
    for number in ["12345678901234567890", "0.10000000000000000001", "1e400", "1" * 60, "-0", "1E-400", "1.5e-300000"]:
        cases.append((json_request("PUT", "/v1/prefs/fuzz.number", number), False))
    cases.append((json_request("POST", "/v1/prefs:batch", '{"operations":[{"op":"set","key":"fuzz.null","value":null}]}'), False))
    cases.append((json_request("PUT", "/v1/prefs/fuzz.object", '{"a":1,"a":2}'), False))
    return cases


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--socket", required=True, help="the daemon's Unix socket")
    arguments = parser.parse_args()
    cases = corpus(arguments.socket)
    failures = 0
    for raw, hang_up in cases:
        status = exchange(arguments.socket, raw, hang_up)
        if status >= 500:
            failures += 1
            print("5xx: %d for %s" % (status, json.dumps(raw[:300])), file=sys.stderr)
    print(len(cases), failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

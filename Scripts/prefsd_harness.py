"""What Scripts/crash-test.py and Scripts/fault-test.py share: HTTP and SSE over prefsd's Unix
socket, starting and stopping prefsd on a temp database, read-only SQLite checks, temp-folder
cleanup and the printed summaries. Standard library only."""

import http.client
import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.parse

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def default_binary(name):
    """The debug build of `name` in this checkout."""
    return os.path.join(REPO, ".build", "debug", name)


def require_binary(path, what, prog, wait=0):
    """Exits unless `path` is executable, checking once a second for `wait` seconds (a rebuild)."""
    for _ in range(wait or 1):
        if os.access(path, os.X_OK):
            return
        if wait:
            time.sleep(1)   # being rebuilt
    sys.exit("%s: no %s at %s (build it: swift build)" % (prog, what, path))


# --------------------------------------------------------------------------------------------
# HTTP over the Unix socket


class UnixHTTPConnection(http.client.HTTPConnection):
    """An http.client connection to a Unix socket path."""

    def __init__(self, socket_path, timeout=15.0):
        """A connection to `socket_path`, opened on first use."""
        super().__init__("prefsd", timeout=timeout)
        self.socket_path = socket_path

    def connect(self):
        """Connects the AF_UNIX socket."""
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        try:
            sock.connect(self.socket_path)
        except BaseException:
            sock.close()
            raise
        self.sock = sock


def parse_json(data):
    """The JSON of an answer's body, or None when it is empty or not JSON."""
    try:
        return json.loads(data) if data else None
    except ValueError:
        return None


class Client:
    """One keep-alive connection; any transport error closes it and propagates."""

    def __init__(self, socket_path, timeout=15.0):
        """A client of the daemon at `socket_path`."""
        self.socket_path = socket_path
        self.timeout = timeout
        self.conn = None

    def request(self, method, path, body=None, headers=None):
        """Sends a request (a non-bytes body as JSON); returns (status, body bytes)."""
        if self.conn is None:
            self.conn = UnixHTTPConnection(self.socket_path, self.timeout)
        hdrs = {"Host": "prefsd"}
        if body is not None and not isinstance(body, (bytes, bytearray)):
            body = json.dumps(body).encode()
            hdrs["Content-Type"] = "application/json"
        hdrs.update(headers or {})
        try:
            self.conn.request(method, path, body=body, headers=hdrs)
            resp = self.conn.getresponse()
            data = resp.read()
        except BaseException:
            self.close()
            raise
        if resp.getheader("Connection", "").lower() == "close":
            self.close()
        return resp.status, data

    def json(self, method, path, body=None, headers=None):
        """Like request; returns (status, parsed JSON or None, body bytes)."""
        status, data = self.request(method, path, body, headers)
        return status, parse_json(data), data

    def close(self):
        """Closes the connection, if any."""
        if self.conn is not None:
            try:
                self.conn.close()
            except Exception:
                pass
            self.conn = None


def q(s):
    """`s` quoted for a URL path or query, slashes too."""
    return urllib.parse.quote(s, safe="")


def error_code(body):
    """The `error.code` of an error answer's JSON, or None."""
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        return body["error"].get("code")
    return None


def parse_head(head):
    """(status, headers with lower-case names) of an HTTP answer's head bytes."""
    lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return int(lines[0].split()[1]), headers


class SSEStream:
    """A watch stream read with a raw socket, so that a read timeout is just a tick.

    events() yields dicts {id, event, data} and None on every idle tick; it ends at EOF."""

    def __init__(self, socket_path, path, tick=0.2, headers=None):
        """Sends GET `path` and reads the answer's head (and a non-200 answer's body)."""
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(5)
        self.sock.connect(socket_path)
        extra = "".join("%s: %s\r\n" % kv for kv in (headers or {}).items())
        self.sock.sendall(
            ("GET %s HTTP/1.1\r\nHost: prefsd\r\nAccept: text/event-stream\r\n%s\r\n" % (path, extra)).encode())
        raw = b""
        while b"\r\n\r\n" not in raw:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("watch: connection closed before the answer's head")
            raw += chunk
        head, self.raw = raw.split(b"\r\n\r\n", 1)
        self.status, self.headers = parse_head(head)
        self.chunked = "chunked" in self.headers.get("transfer-encoding", "").lower()
        self.body = b""
        self.eof = False
        self.clean_end = False   # the chunked body's last (0-size) chunk arrived
        self.sock.settimeout(tick)
        if self.status != 200:
            deadline = time.time() + 5
            while not self.eof and time.time() < deadline:
                self._fill()
                if not self.chunked and "content-length" in self.headers and \
                        len(self.raw) >= int(self.headers["content-length"]):
                    break
            self.error_body = (self.body or self.raw)[:2000]

    def _fill(self):
        """Reads once (up to a tick); returns whether bytes came."""
        try:
            chunk = self.sock.recv(65536)
        except socket.timeout:
            return False
        except OSError:
            self.eof = True
            return False
        if not chunk:
            self.eof = True
            return False
        self.raw += chunk
        self._decode()
        return True

    def _decode(self):
        """Moves whole chunks (or all bytes, unchunked) from raw to body."""
        if not self.chunked:
            self.body += self.raw
            self.raw = b""
            return
        while True:
            line_end = self.raw.find(b"\r\n")
            if line_end < 0:
                return
            size = int(self.raw[:line_end].split(b";")[0] or b"0", 16)
            if size == 0:
                self.eof = True
                self.clean_end = True
                self.raw = b""
                return
            if len(self.raw) < line_end + 2 + size + 2:
                return
            self.body += self.raw[line_end + 2:line_end + 2 + size]
            self.raw = self.raw[line_end + 2 + size + 2:]

    def events(self):
        """Yields each event as {id, event, data}, and None on an idle tick, until EOF."""
        while True:
            self.body = self.body.replace(b"\r\n", b"\n")
            while b"\n\n" in self.body:
                block, self.body = self.body.split(b"\n\n", 1)
                event = {"id": None, "event": "message", "data": ""}
                data_lines = []
                comment_only = True
                for line in block.decode("utf-8", "replace").split("\n"):
                    if not line or line.startswith(":"):
                        continue
                    comment_only = False
                    name, _, value = line.partition(":")
                    value = value[1:] if value.startswith(" ") else value
                    if name == "id":
                        event["id"] = value
                    elif name == "event":
                        event["event"] = value
                    elif name == "data":
                        data_lines.append(value)
                if comment_only:
                    continue
                event["data"] = "\n".join(data_lines)
                yield event
            if self.eof:
                return
            if not self._fill():
                if self.eof:
                    continue
                yield None

    def close(self):
        """Closes the socket."""
        try:
            self.sock.close()
        except OSError:
            pass


# --------------------------------------------------------------------------------------------
# Daemons and cleanup

LIVE = set()        # Daemon objects whose process may still run
CLEANUPS = []       # callables of the running case, run last-in first-out by cleanup()


class Daemon:
    """One prefsd process on a database and socket, its output appended to a log file."""

    def __init__(self, binary, db, sock, log_path, extra=(), prefix=(), log_level="info"):
        """A daemon not started yet; `prefix` goes before the binary (e.g. setpriv ...)."""
        self.binary, self.db, self.sock, self.log_path = binary, db, sock, log_path
        self.extra, self.prefix, self.log_level = list(extra), list(prefix), log_level
        self.proc = None
        self.log = None

    def spawn(self):
        """Starts the process without waiting for it; returns the Popen."""
        self.log = open(self.log_path, "ab")
        args = self.prefix + [self.binary, "--db", self.db, "--socket", self.sock, "--log-level", self.log_level] + self.extra
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log,
                                     start_new_session=True)
        LIVE.add(self)
        return self.proc

    def start(self, timeout=20.0):
        """Starts the daemon and waits until GET /v1/status answers; returns that status JSON."""
        self.spawn()
        deadline = time.time() + timeout
        client = Client(self.sock, timeout=2)
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("prefsd exited with status %s while starting:\n%s"
                                   % (self.proc.returncode, self.log_tail()))
            try:
                status, body, _ = client.json("GET", "/v1/status")
                if status == 200:
                    client.close()
                    return body
            except (OSError, http.client.HTTPException):
                pass
            time.sleep(0.02)
        raise RuntimeError("prefsd did not answer GET /v1/status within %.0f s:\n%s" % (timeout, self.log_tail()))

    def alive(self):
        """Whether the process was started and still runs."""
        return self.proc is not None and self.proc.poll() is None

    def kill9(self):
        """SIGKILL, then reap the process."""
        if self.alive():
            os.kill(self.proc.pid, signal.SIGKILL)
        self.wait(10)

    def terminate(self, timeout=15.0):
        """SIGTERM; returns (exit status, seconds) — status None if it had to be killed."""
        if not self.alive():
            return (self.proc.returncode if self.proc else None), 0.0
        started = time.time()
        os.kill(self.proc.pid, signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill9()
            rc = None
        self.wait(0)
        return rc, time.time() - started

    def wait(self, timeout):
        """Reaps the process (SIGKILL after `timeout` s) and closes the log."""
        if self.proc:
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        if self.log:
            self.log.close()
            self.log = None
        LIVE.discard(self)

    def log_text(self):
        """The whole log file as text ("" if unreadable)."""
        try:
            with open(self.log_path, "rb") as f:
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def log_tail(self, n=30):
        """The last `n` lines of the log."""
        return "\n".join(self.log_text().splitlines()[-n:])


def kill_all_live():
    """SIGKILLs every daemon that may still run and closes its log."""
    for d in list(LIVE):
        try:
            if d.proc and d.proc.poll() is None:
                os.kill(d.proc.pid, signal.SIGKILL)
                d.proc.wait(5)
        except Exception:
            pass
        if d.log:
            try:
                d.log.close()
            except Exception:
                pass
        LIVE.discard(d)


def cleanup(prog):
    """Kills live daemons, then runs the CLEANUPS steps last-in first-out, reporting failures."""
    kill_all_live()
    while CLEANUPS:
        fn = CLEANUPS.pop()
        try:
            fn()
        except Exception as exc:
            print("%s: cleanup step failed: %r" % (prog, exc), file=sys.stderr)


def keep_or_remove(folder, keep):
    """Removes a temp folder unless `keep`; returns whether it was kept."""
    if keep:
        return True
    shutil.rmtree(folder, ignore_errors=True)
    return False


# --------------------------------------------------------------------------------------------
# SQLite checks


def ro_connect(db):
    """A read-only connection to the database file, waiting up to 10 s on locks."""
    conn = sqlite3.connect("file:%s?mode=ro" % urllib.parse.quote(db), uri=True, timeout=10)
    conn.execute("PRAGMA busy_timeout = 10000")
    return conn


def integrity(conn):
    """PRAGMA integrity_check on a connection: None if ok, else the first problems."""
    rows = [r[0] for r in conn.execute("PRAGMA integrity_check").fetchall()]
    return None if rows == ["ok"] else "; ".join(rows[:5])


def db_integrity(db):
    """integrity() of the database file through a read-only connection."""
    conn = ro_connect(db)
    try:
        return integrity(conn)
    finally:
        conn.close()


def staged_uploads(db):
    """(folder, names) of the staged upload files left beside the database."""
    staged = db + ".uploads"
    return staged, (os.listdir(staged) if os.path.isdir(staged) else [])


# --------------------------------------------------------------------------------------------
# Printed summaries


def print_pairs(pairs, width, indent=""):
    """Prints (label, value) rows, the labels padded to `width`."""
    for label, value in pairs:
        print("%s%-*s %s" % (indent, width, label, value), flush=True)


def print_problems(problems, show_all, hint, bullet="-", continuation=None):
    """Prints the problems (the first 10 unless show_all), then how many more `hint` would show."""
    shown = problems if show_all else problems[:10]
    for p in shown:
        if continuation is not None:
            p = p.replace("\n", "\n" + continuation)
        print("    %s %s" % (bullet, p), flush=True)
    if len(problems) > len(shown):
        print("    … and %d more (%s)" % (len(problems) - len(shown), hint))

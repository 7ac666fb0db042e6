#!/usr/bin/env python3
"""kill -9 crash harness for prefsd.

Each round starts prefsd on a fresh temp database and socket, drives concurrent clients against
it (preference PUTs, batch writes, a batch that must be refused, draft creates and edits with
If-Match, attachment uploads and removals) plus two watchers (a key-prefix watch and an account's
draft watch), records every acknowledged write with the revision its answer carries, then
`kill -9`s the daemon at a random moment, restarts it on the same database and checks (with
--kills-per-round K, K times on one database). One client always has a large upload half sent
when the kill comes. The checks:

  - every acknowledged write is there: its change-log row at the revision it was answered with
    holds its value, and the current value of every key/draft is the last acknowledged one or a
    later write that was in flight when the daemon died (never an older one, never a refused one);
  - PRAGMA integrity_check is ok (on a copy of the files taken right after the kill, on the live
    database through a separate read-only connection, and after the final graceful stop);
  - change-log revisions have no gaps and agree with change_log_state (where the log starts;
    the newest revision at the last compaction) and /v1/status;
  - each batch is all or nothing, a refused batch left nothing;
  - each attachment is whole (bytes hash to the sha256 uploaded; blob chunks complete) or absent,
    no blob is left without an attachment, no staged upload file is left behind;
  - each watcher got, before the kill, exactly the matching change-log rows up to its last
    event (no gap, no repeat, nothing that was not committed), and resuming from its last
    revision (since=<last> for the prefix watch, Last-Event-ID for the draft watch) gets every
    later matching change exactly once, in order (and so does a replay from the middle of what
    it had seen; the prefix watch also hangs up and resumes every 150 events while writes go on);
  - the daemon restarts on the same socket path (the stale socket file is cleaned up) and
    stops on SIGTERM with status 0.

Exits non-zero on any violation. Standard library only.

    Scripts/crash-test.py                                  # 20 rounds of 3 s
    Scripts/crash-test.py --rounds 3 --seconds-per-round 2 # the CI form
    Scripts/crash-test.py --rounds 200 --time-limit 600 --seed 7
    Scripts/crash-test.py --rounds 20 --kills-per-round 3 --durability normal --keep-failed

A seed makes the schedule (which key, when to kill) repeatable, not the daemon's timing.
"""

import argparse
import hashlib
import http.client
import json
import os
import random
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from prefsd_harness import (Client, Daemon, SSEStream, default_binary, db_integrity, integrity,  # noqa: E402
                            keep_or_remove, kill_all_live, print_pairs, print_problems, q, require_binary,
                            ro_connect, staged_uploads)

KEY_PREFIX = "crash."
ACCOUNT = "crash"
NOTICE_KINDS = {"progress", "overflow", "shutdown", "error"}


# --------------------------------------------------------------------------------------------
# What the clients did


class Ledger:
    """Everything the clients sent and what they were told, shared by the client threads."""

    def __init__(self):
        self.lock = threading.Lock()
        self.killed = threading.Event()   # set just before SIGKILL: errors after it are expected
        self.stop = threading.Event()
        self.writes = {}       # value id -> {key, scope, value, state, revision, batch}
        self.batches = []      # {ids, state, revisions, poisoned}
        self.drafts = {}       # draft id -> {"acked": [state...], "inflight": op or None}
        self.inflight_creates = []  # texts of creates whose answer never came
        self.uploads = {}      # sha256 -> bytes (every body uploaded)
        self.failures = []     # unexpected answers / errors before the kill
        self.counts = {"put": 0, "batch_ops": 0, "draft_ops": 0, "uploads": 0, "refused_batches": 0}

    def fail(self, msg):
        with self.lock:
            self.failures.append(msg)


def transport_error(ledger, what, exc):
    """An error talking to the daemon: expected once it was killed, a failure before."""
    if not ledger.killed.is_set():
        ledger.fail("%s: transport error before the kill: %r" % (what, exc))


class PrefWorker(threading.Thread):
    def __init__(self, ledger, sock, rnd, name, keys, scopes):
        super().__init__(name=name, daemon=True)
        self.ledger, self.client, self.rnd, self.keys, self.scopes = ledger, Client(sock), rnd, keys, scopes
        self.seq = 0

    def new_write(self, batch=None):
        self.seq += 1
        wid = "%s-%d" % (self.name, self.seq)
        key, scope = self.rnd.choice(self.keys), self.rnd.choice(self.scopes)
        value = {"w": wid, "n": self.seq, "s": "ü✓ \"q\"", "a": [1, {"t": True}, None]}
        entry = {"key": key, "scope": scope, "value": value, "state": "inflight", "revision": None, "batch": batch}
        with self.ledger.lock:
            self.ledger.writes[wid] = entry
        return wid, entry

    def run(self):
        L = self.ledger
        while not L.stop.is_set():
            r = self.rnd.random()
            try:
                if r < 0.65:
                    self.put()
                elif r < 0.95:
                    self.batch(poisoned=False)
                else:
                    self.batch(poisoned=True)
            except (OSError, http.client.HTTPException) as exc:
                transport_error(L, self.name, exc)
                if L.killed.is_set():
                    break
        self.client.close()

    def put(self):
        wid, e = self.new_write()
        status, body, raw = self.client.json(
            "PUT", "/v1/prefs/%s?scope=%s" % (q(e["key"]), q(e["scope"])), e["value"])
        with self.ledger.lock:
            if status == 200 and body and isinstance(body.get("revision"), int):
                e["state"], e["revision"] = "acked", body["revision"]
                self.ledger.counts["put"] += 1
            else:
                e["state"] = "refused"
                self.ledger.failures.append("PUT %s at %s answered %s %r" % (e["key"], e["scope"], status, raw[:300]))

    def batch(self, poisoned):
        n = self.rnd.randint(2, 6)
        ids, ops = [], []
        for _ in range(n):
            wid, e = self.new_write(batch=True)
            ids.append(wid)
            ops.append({"op": "set", "key": e["key"], "scope": e["scope"], "value": e["value"]})
        if poisoned:  # a bad key last: the whole batch must be refused, nothing written
            ops.append({"op": "set", "key": "Bad Key!", "scope": "/", "value": 1})
        b = {"ids": ids, "state": "inflight", "revisions": None, "poisoned": poisoned}
        with self.ledger.lock:
            self.ledger.batches.append(b)
            for wid in ids:
                self.ledger.writes[wid]["batch"] = b
        status, body, raw = self.client.json("POST", "/v1/prefs:batch", {"operations": ops})
        with self.ledger.lock:
            if poisoned:
                b["state"] = "refused"
                for wid in ids:
                    self.ledger.writes[wid]["state"] = "refused"
                if status == 400:
                    self.ledger.counts["refused_batches"] += 1
                else:
                    self.ledger.failures.append("a batch with a bad key answered %s (want 400): %r" % (status, raw[:300]))
                return
            revs = body.get("revisions") if status == 200 and isinstance(body, dict) else None
            if isinstance(revs, list) and len(revs) == len(ids):
                b["state"], b["revisions"] = "acked", revs
                for wid, rev in zip(ids, revs):
                    self.ledger.writes[wid]["state"] = "acked"
                    self.ledger.writes[wid]["revision"] = rev
                self.ledger.counts["batch_ops"] += len(ids)
                if body.get("revision") != revs[-1]:
                    self.ledger.failures.append("batch answer: revision %r is not the last of revisions %r" % (body.get("revision"), revs))
            else:
                b["state"] = "refused"
                for wid in ids:
                    self.ledger.writes[wid]["state"] = "refused"
                self.ledger.failures.append("batch answered %s %r" % (status, raw[:300]))


def draft_state(d):
    """What we compare of a draft: its revision, text, and attachments (id, sha256) in order."""
    return {"revision": d["revision"], "text": d.get("text", ""),
            "attachments": [(a["id"].upper(), a["sha256"]) for a in sorted(d.get("attachments", []), key=lambda a: a["position"])]}


class DraftWorker(threading.Thread):
    def __init__(self, ledger, sock, rnd, name):
        super().__init__(name=name, daemon=True)
        self.ledger, self.client, self.rnd = ledger, Client(sock), rnd
        self.seq = 0
        self.current = None  # (id, state) of the draft this worker edits
        self.bodies = []

    def text(self):
        self.seq += 1
        return "%s-%d %s" % (self.name, self.seq, "é" * self.rnd.randint(0, 20))

    def run(self):
        L = self.ledger
        while not L.stop.is_set():
            try:
                if self.current is None or self.rnd.random() < 0.08:
                    self.create()
                    continue
                r = self.rnd.random()
                atts = self.current[1]["attachments"]
                if r < 0.45:
                    self.edit()
                elif r < 0.85 and len(atts) < 6:
                    self.upload()
                elif atts:
                    self.detach()
                else:
                    self.edit()
            except (OSError, http.client.HTTPException) as exc:
                transport_error(L, self.name, exc)
                if L.killed.is_set():
                    break
        self.client.close()

    def _set_inflight(self, did, op):
        with self.ledger.lock:
            self.ledger.drafts[did]["inflight"] = op

    def _ack(self, did, draft, op):
        state = draft_state(draft)
        expect = op["after"]
        with self.ledger.lock:
            rec = self.ledger.drafts[did]
            rec["inflight"] = None
            rec["acked"].append(state)
            self.ledger.counts["draft_ops"] += 1
            if not same_draft(state, expect):
                self.ledger.failures.append("draft %s: answer %r is not what %s should give (%r)" % (did, state, op["kind"], expect))
        self.current = (did, state)

    def _refused(self, did, what, status, raw):
        with self.ledger.lock:
            if did:
                self.ledger.drafts[did]["inflight"] = None
            self.ledger.failures.append("%s answered %s %r" % (what, status, raw[:300]))

    def create(self):
        text = self.text()
        with self.ledger.lock:
            self.ledger.inflight_creates.append(text)
        status, body, raw = self.client.json("POST", "/v1/drafts", {"account": ACCOUNT, "text": text})
        with self.ledger.lock:
            self.ledger.inflight_creates.remove(text)
            if status == 201 and isinstance(body, dict) and "id" in body:
                did = body["id"].upper()
                state = draft_state(body)
                self.ledger.drafts[did] = {"acked": [state], "inflight": None}
                self.ledger.counts["draft_ops"] += 1
                if state["revision"] != 1 or state["text"] != text or state["attachments"]:
                    self.ledger.failures.append("draft create answered %r" % (state,))
                self.current = (did, state)
            else:
                self.ledger.failures.append("draft create answered %s %r" % (status, raw[:300]))

    def edit(self):
        did, cur = self.current
        text = self.text()
        after = dict(cur, revision=cur["revision"] + 1, text=text)
        op = {"kind": "edit", "after": after}
        self._set_inflight(did, op)
        status, body, raw = self.client.json("PATCH", "/v1/drafts/%s" % did, {"text": text},
                                             {"If-Match": str(cur["revision"])})
        if status == 200 and isinstance(body, dict):
            self._ack(did, body, op)
        else:
            self._refused(did, "PATCH draft %s" % did, status, raw)
            self.current = None

    def upload(self):
        did, cur = self.current
        if self.bodies and self.rnd.random() < 0.2:
            data = self.rnd.choice(self.bodies)  # identical bytes again: a shared blob
        else:
            data = os.urandom(self.rnd.randint(100_000, 700_000))
            self.bodies.append(data)
            if len(self.bodies) > 4:
                self.bodies.pop(0)
        sha = hashlib.sha256(data).hexdigest()
        with self.ledger.lock:
            self.ledger.uploads[sha] = data
        after = dict(cur, revision=cur["revision"] + 1, attachments=cur["attachments"] + [(None, sha)])
        op = {"kind": "upload", "after": after}
        self._set_inflight(did, op)
        status, body, raw = self.client.json(
            "POST", "/v1/drafts/%s/attachments?filename=f.bin&kind=file" % did, data,
            {"If-Match": str(cur["revision"]), "Content-Type": "application/octet-stream"})
        if status == 201 and isinstance(body, dict) and "draft" in body:
            att = body.get("attachment", {})
            if att.get("sha256") != sha or att.get("byteSize") != len(data):
                self.ledger.fail("upload to %s: answer says sha256 %s size %s, sent %s size %d"
                                 % (did, att.get("sha256"), att.get("byteSize"), sha, len(data)))
            with self.ledger.lock:
                self.ledger.counts["uploads"] += 1
            self._ack(did, body["draft"], op)
        else:
            self._refused(did, "upload to draft %s" % did, status, raw)
            self.current = None

    def detach(self):
        did, cur = self.current
        aid = self.rnd.choice(cur["attachments"])[0]
        after = dict(cur, revision=cur["revision"] + 1, attachments=[a for a in cur["attachments"] if a[0] != aid])
        op = {"kind": "detach", "after": after}
        self._set_inflight(did, op)
        status, body, raw = self.client.json("DELETE", "/v1/drafts/%s/attachments/%s" % (did, aid),
                                             None, {"If-Match": str(cur["revision"])})
        if status == 200 and isinstance(body, dict):
            self._ack(did, body, op)
        else:
            self._refused(did, "DELETE attachment %s of %s" % (aid, did), status, raw)
            self.current = None


class TornUploader(DraftWorker):
    """Creates a draft, then uploads a large attachment slowly enough that it is always mid-body
    when the daemon is killed: the draft must come back without it, and nothing of it kept."""

    def __init__(self, ledger, sock, rnd, name, size=64 << 20, chunk=64 << 10, pause=0.05):
        super().__init__(ledger, sock, rnd, name)
        self.sock_path, self.size, self.chunk, self.pause = sock, size, chunk, pause
        self.sent = 0

    def run(self):
        L = self.ledger
        try:
            self.create()
            if self.current is None:
                return
            did, cur = self.current
            after = dict(cur, revision=cur["revision"] + 1, attachments=cur["attachments"] + [(None, "torn")])
            self._set_inflight(did, {"kind": "torn upload", "after": after})
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(15)
            try:
                s.connect(self.sock_path)
                s.sendall(("POST /v1/drafts/%s/attachments?filename=torn.bin&kind=file HTTP/1.1\r\nHost: prefsd\r\n"
                           "Content-Type: application/octet-stream\r\nContent-Length: %d\r\nIf-Match: %d\r\n\r\n"
                           % (did, self.size, cur["revision"])).encode())
                while self.sent < self.size and not L.stop.is_set():
                    s.sendall(os.urandom(min(self.chunk, self.size - self.sent)))
                    self.sent += self.chunk
                    time.sleep(self.pause)
                if not L.killed.is_set():
                    L.fail("%s: the slow upload was not cut by the kill (%d bytes sent); use shorter rounds" % (self.name, self.sent))
            finally:
                s.close()
        except (OSError, http.client.HTTPException) as exc:
            transport_error(L, self.name, exc)


def same_draft(state, expect):
    """Compare a draft's state with an expected one whose new attachment id may be unknown (None)."""
    if state["revision"] != expect["revision"] or state["text"] != expect["text"]:
        return False
    if len(state["attachments"]) != len(expect["attachments"]):
        return False
    return all((e[0] is None or e[0] == s[0]) and e[1] == s[1]
               for s, e in zip(state["attachments"], expect["attachments"]))


class Watcher(threading.Thread):
    """Follows one watch from `since`, reconnecting (since = last revision) if the stream ends
    while the daemon lives. Records every change event (not notices)."""

    def __init__(self, ledger, sock, name, query, since):
        super().__init__(name=name, daemon=True)
        self.ledger, self.sock, self.query, self.since = ledger, sock, query, since
        self.events = []     # (revision, kind, data)
        self.last = since
        self.streams = 0
        self.overflows = 0
        self.resume_with_header = False  # resume after the restart with Last-Event-ID, not since=
        self.reconnect_every = 0         # hang up and resume after this many events (0: never)

    def run(self):
        L = self.ledger
        while not L.killed.is_set() and not L.stop.is_set():
            try:
                stream = SSEStream(self.sock, "/v1/watch?%s&since=%d" % (self.query, self.last))
            except (OSError, ValueError) as exc:
                transport_error(L, self.name, exc)
                return
            self.streams += 1
            if stream.status != 200:
                L.fail("%s: watch answered %s %r" % (self.name, stream.status, stream.error_body))
                stream.close()
                return
            try:
                killed_at = None
                for ev in stream.events():  # after the kill, read on to EOF: what was sent counts
                    if ev is None:
                        if L.killed.is_set():
                            killed_at = killed_at or time.time()
                            if time.time() - killed_at > 5:
                                break
                        continue
                    if ev["event"] == "overflow":
                        self.overflows += 1
                        break
                    if ev["event"] in NOTICE_KINDS:
                        continue
                    rev = int(ev["id"])
                    self.events.append((rev, ev["event"], json.loads(ev["data"])))
                    self.last = rev
                    if self.reconnect_every and len(self.events) % self.reconnect_every == 0:
                        break  # hang up and resume from self.last, while the writers go on
            except (OSError, ValueError) as exc:
                transport_error(L, self.name, exc)
            finally:
                stream.close()


def resume_watch(sock, query, since, expected_last, wait=10.0, last_event_id=False):
    """Reads a watch from `since` (as `since=` or, like a reconnecting EventSource, as the
    Last-Event-ID header) until it has seen `expected_last` (or a progress notice at or past it),
    then a little more to catch repeats. Returns (events, error)."""
    if last_event_id:
        stream = SSEStream(sock, "/v1/watch?%s" % query, headers={"Last-Event-ID": str(since)})
    else:
        stream = SSEStream(sock, "/v1/watch?%s&since=%d" % (query, since))
    try:
        if stream.status != 200:
            return [], "resume answered %s %r" % (stream.status, stream.error_body)
        events = []
        deadline = time.time() + wait
        caught_up_at = None
        if expected_last <= since:
            caught_up_at = time.time()
        for ev in stream.events():
            now = time.time()
            if caught_up_at is not None and now - caught_up_at > 0.4:
                break
            if now > deadline:
                return events, "resume: did not reach revision %d within %.0f s (got up to %s)" % (
                    expected_last, wait, events[-1][0] if events else since)
            if ev is None:
                continue
            if ev["event"] == "progress":
                data = json.loads(ev["data"]) if ev["data"] else {}
                if caught_up_at is None and data.get("revision", -1) >= expected_last:
                    caught_up_at = now
                continue
            if ev["event"] in NOTICE_KINDS:
                return events, "resume: stream ended with %s %s" % (ev["event"], ev["data"])
            rev = int(ev["id"])
            events.append((rev, ev["event"], json.loads(ev["data"])))
            if caught_up_at is None and rev >= expected_last:
                caught_up_at = now
        if caught_up_at is None:
            return events, "resume: stream ended before revision %d" % expected_last
        return events, None
    finally:
        stream.close()


# --------------------------------------------------------------------------------------------
# Checks


def snapshot_integrity(db, workdir):
    """PRAGMA integrity_check on a copy of the files exactly as kill -9 left them."""
    snap = os.path.join(workdir, "snapshot")
    os.makedirs(snap, exist_ok=True)
    copy = os.path.join(snap, "prefs.sqlite")
    for suffix in ("", "-wal"):
        if os.path.exists(db + suffix):
            shutil.copyfile(db + suffix, copy + suffix)
    try:
        conn = sqlite3.connect(copy, timeout=10)
        try:
            return integrity(conn)
        finally:
            conn.close()
    finally:
        shutil.rmtree(snap, ignore_errors=True)


def matching_rows(changes, pred, after):
    return [(rev, row) for rev, row in changes if rev > after and pred(row)]


def check_watch(label, events, rows, since, last, problems):
    """Events (before the kill) against the change-log rows that match the watch."""
    revs = [e[0] for e in events]
    for a, b in zip(revs, revs[1:]):
        if b <= a:
            problems.append("%s: revision %d came after %d (repeat or out of order)" % (label, b, a))
            break
    expected = [rev for rev, _ in rows if since < rev <= last]
    got = set(revs)
    missing = [r for r in expected if r not in got]
    phantom = sorted(got - set(r for r, _ in rows))
    if missing:
        problems.append("%s: %d matching changes up to %d never delivered (gap), e.g. %s" % (label, len(missing), last, missing[:5]))
    if phantom:
        problems.append("%s: got events for revisions not in the change log after restart (uncommitted?): %s" % (label, phantom[:5]))


def check_events_match_rows(label, events, rowmap, problems):
    for rev, kind, data in events:
        row = rowmap.get(rev)
        if row is None:
            continue
        if row["kind"] != kind:
            problems.append("%s: event %d is %s, the change log says %s" % (label, rev, kind, row["kind"]))
        elif kind == "set" and row["key"] is not None:
            if data.get("key") != row["key"] or data.get("scope") != row["scope"] or \
                    data.get("value") != json.loads(row["value"]):
                problems.append("%s: event %d %r differs from the change log %r" % (label, rev, data, dict(row)))


def verify(ledger, daemon, db, sock, watchers, restart_status, problems, stats):
    """Every check after the restart. Appends to problems; fills stats."""
    client = Client(sock)
    conn = ro_connect(db)
    conn.row_factory = sqlite3.Row
    try:
        err = integrity(conn)
        if err:
            problems.append("integrity_check on the live database after restart: %s" % err)

        # ---- change log: gap-free, agrees with its state and /v1/status. change_log_state is
        # written when the log is compacted: its current_revision is the newest revision then, so
        # never past the log's end; the newest revision now is the log's last row.
        state = conn.execute("SELECT current_revision, oldest_revision FROM change_log_state").fetchone()
        changes = [(r["revision"], r) for r in conn.execute("SELECT * FROM change ORDER BY revision")]
        revs = [r for r, _ in changes]
        newest = max([state["current_revision"]] + revs[-1:])
        if revs:
            if revs[0] != state["oldest_revision"]:
                problems.append("change log starts at %d, change_log_state.oldest_revision = %d" % (revs[0], state["oldest_revision"]))
            if state["current_revision"] > revs[-1]:
                problems.append("change log ends at %d, before change_log_state.current_revision = %d" % (revs[-1], state["current_revision"]))
            gaps = [(a, b) for a, b in zip(revs, revs[1:]) if b != a + 1]
            if gaps:
                problems.append("change log has gaps: %s" % gaps[:5])
        if restart_status.get("revision") != newest:
            problems.append("/v1/status revision %s after restart, the change log's newest is %d" % (restart_status.get("revision"), newest))
        rowmap = dict(changes)
        stats["revision"] = newest

        # ---- preferences: every acked write at its revision, final values, batches all or nothing
        by_value = {}
        for rev, row in changes:
            if row["key"] and row["key"].startswith(KEY_PREFIX) and row["kind"] == "set" and row["value"]:
                try:
                    wid = json.loads(row["value"]).get("w")
                except (ValueError, AttributeError):
                    wid = None
                if wid is not None:
                    if wid in by_value:
                        problems.append("write %s is in the change log twice (%d and %d)" % (wid, by_value[wid], rev))
                    by_value[wid] = rev
        with ledger.lock:
            writes = dict(ledger.writes)
            batches = list(ledger.batches)
        acked = lost = inflight = committed_inflight = 0
        per_key = {}
        for wid, w in writes.items():
            per_key.setdefault((w["key"], w["scope"]), []).append(wid)
            if w["state"] == "acked":
                acked += 1
                row = rowmap.get(w["revision"])
                if row is None or row["kind"] != "set" or row["key"] != w["key"] or row["scope"] != w["scope"] \
                        or json.loads(row["value"]) != w["value"]:
                    lost += 1
                    problems.append("acknowledged write %s (%s at %s, revision %d) is not in the change log at that revision: %r"
                                    % (wid, w["key"], w["scope"], w["revision"], dict(row) if row else None))
            elif w["state"] == "refused":
                if wid in by_value:
                    problems.append("refused write %s was stored at revision %d" % (wid, by_value[wid]))
            elif w["state"] == "inflight":
                inflight += 1
                if wid in by_value:
                    committed_inflight += 1
        for b in batches:
            if b["state"] == "inflight":
                present = [wid for wid in b["ids"] if wid in by_value]
                if present and len(present) != len(b["ids"]):
                    problems.append("batch half applied: %d of %d operations committed (%s)" % (len(present), len(b["ids"]), b["ids"]))
            if b["state"] == "acked":
                r = b["revisions"]
                if any(y <= x for x, y in zip(r, r[1:])):
                    problems.append("batch revisions not increasing: %s" % r)

        stored = {(r["key"], r["scope"]): r for r in conn.execute(
            "SELECT key, scope, value, revision FROM preference WHERE key LIKE ?", (KEY_PREFIX + "%",))}
        for (key, scope), row in stored.items():
            if (key, scope) not in per_key:
                problems.append("%s at %s is stored but no client wrote it" % (key, scope))
        for (key, scope), wids in per_key.items():
            ws = [writes[w] for w in wids]
            acked_revs = [w["revision"] for w in ws if w["state"] == "acked"]
            last_ack = max(acked_revs) if acked_revs else None
            row = stored.get((key, scope))
            if row is None:
                if last_ack is not None:
                    lost += 1
                    problems.append("%s at %s: acknowledged at revision %d, now absent" % (key, scope, last_ack))
                continue
            value = json.loads(row["value"])
            wid = value.get("w") if isinstance(value, dict) else None
            w = writes.get(wid)
            if w is None or (w["key"], w["scope"]) != (key, scope):
                problems.append("%s at %s holds %r, which no client wrote there" % (key, scope, value))
                continue
            if w["state"] == "refused":
                problems.append("%s at %s holds the value of refused write %s" % (key, scope, wid))
            elif last_ack is not None and row["revision"] < last_ack:
                lost += 1
                problems.append("%s at %s holds revision %d (%s), older than the last acknowledged %d"
                                % (key, scope, row["revision"], wid, last_ack))
            elif w["state"] == "acked" and w["revision"] != row["revision"]:
                problems.append("%s at %s: revision %d, but %s was acknowledged as %d" % (key, scope, row["revision"], wid, w["revision"]))
            elif by_value.get(wid) != row["revision"]:
                problems.append("%s at %s: revision %d, the change log has %s at %s" % (key, scope, row["revision"], wid, by_value.get(wid)))
        stats["pref_acked"], stats["pref_lost"] = acked, lost
        stats["inflight"] = inflight
        stats["inflight_committed"] = committed_inflight
        # and the daemon answers the same as the table (its `revision` is the store's at the read)
        for (key, scope) in per_key:
            status, body, raw = client.json("GET", "/v1/prefs/%s?scope=%s" % (q(key), q(scope)))
            row = stored.get((key, scope))
            if status != 200:
                problems.append("GET %s at %s after restart answered %s %r" % (key, scope, status, raw[:200]))
            elif row is not None and (body.get("value") != json.loads(row["value"]) or body.get("revision", -1) < row["revision"]
                                      or body.get("source") != "scope:" + scope):
                problems.append("GET %s at %s answers %r, the table holds %r" % (key, scope, body, dict(row)))

        # ---- drafts: every acked state there, or the one op in flight on top of it
        with ledger.lock:
            drafts = {k: {"acked": list(v["acked"]), "inflight": v["inflight"]} for k, v in ledger.drafts.items()}
            inflight_creates = list(ledger.inflight_creates)
            uploads = dict(ledger.uploads)
        status, body, raw = client.json("GET", "/v1/drafts?account=%s" % ACCOUNT)
        if status != 200:
            problems.append("GET /v1/drafts after restart answered %s %r" % (status, raw[:200]))
            body = {"drafts": []}
        now = {d["id"].upper(): d for d in body["drafts"]}
        d_acked = d_lost = 0
        for did, rec in drafts.items():
            d_acked += len(rec["acked"])
            last = rec["acked"][-1]
            for st in rec["acked"]:
                row = conn.execute("SELECT kind FROM change WHERE draft = ? AND draft_revision = ?",
                                   (did, st["revision"])).fetchone()
                if row is None:
                    d_lost += 1
                    problems.append("draft %s: acknowledged revision %d has no change-log row" % (did, st["revision"]))
            d = now.pop(did, None)
            if d is None:
                d_lost += 1
                problems.append("draft %s (acknowledged up to revision %d) is gone" % (did, last["revision"]))
                continue
            st = draft_state(d)
            if same_draft(st, last):
                continue
            op = rec["inflight"]
            if op is not None and same_draft(st, op["after"]):
                stats["inflight_committed"] += 1
                continue
            if st["revision"] < last["revision"]:
                d_lost += 1
            problems.append("draft %s is %r; the last acknowledged state is %r, in flight %r"
                            % (did, st, last, op and op["after"]))
        for did, d in now.items():  # drafts nobody was told about: only an unanswered create
            st = draft_state(d)
            if st["text"] in inflight_creates and st["revision"] == 1 and not st["attachments"]:
                stats["inflight_committed"] += 1
            else:
                problems.append("draft %s %r exists but no create of it was in flight" % (did, st))
        stats["draft_acked"], stats["draft_lost"] = d_acked, d_lost
        stats["inflight"] += sum(1 for r in drafts.values() if r["inflight"]) + len(inflight_creates)

        # ---- attachments: bytes whole through the API, blobs complete, nothing orphaned
        for d in body["drafts"]:
            for a in d.get("attachments", []):
                status, data = client.request("GET", "/v1/drafts/%s/attachments/%s/data" % (d["id"], a["id"]))
                got = hashlib.sha256(data).hexdigest()
                if status != 200 or got != a["sha256"] or len(data) != a["byteSize"]:
                    problems.append("attachment %s of %s: download %s, %d bytes, sha256 %s; stored %s, %d bytes"
                                    % (a["id"], d["id"], status, len(data), got, a["sha256"], a["byteSize"]))
                elif a["sha256"] not in uploads:
                    problems.append("attachment %s of %s has bytes no client uploaded" % (a["id"], d["id"]))
        for b in conn.execute("SELECT sha256, byte_size, chunk_count FROM blob"):
            h = hashlib.sha256()
            n = size = 0
            for (chunk,) in conn.execute("SELECT data FROM blob_chunk WHERE sha256 = ? ORDER BY number", (b["sha256"],)):
                h.update(chunk)
                n += 1
                size += len(chunk)
            if n != b["chunk_count"] or size != b["byte_size"] or h.hexdigest() != b["sha256"]:
                problems.append("blob %s: %d of %d chunks, %d of %d bytes, hash %s"
                                % (b["sha256"][:12], n, b["chunk_count"], size, b["byte_size"], h.hexdigest()[:12]))
        for (sha,) in conn.execute("SELECT sha256 FROM blob WHERE sha256 NOT IN (SELECT sha256 FROM attachment)"):
            problems.append("blob %s is kept but no attachment uses it" % sha[:12])
        for (sha,) in conn.execute("SELECT DISTINCT sha256 FROM blob_chunk WHERE sha256 NOT IN (SELECT sha256 FROM blob)"):
            problems.append("chunks of %s are kept without their blob row" % sha[:12])
        for (aid, sha) in conn.execute("SELECT id, sha256 FROM attachment WHERE sha256 NOT IN (SELECT sha256 FROM blob)"):
            problems.append("attachment %s has no blob %s" % (aid, sha[:12]))
        staged, leftover = staged_uploads(db)
        if leftover:
            size = sum(os.path.getsize(os.path.join(staged, f)) for f in leftover)
            problems.append("%d staged upload file(s) (%d bytes) of the killed daemon still in %s after the restart "
                            "(uploads cut by a crash are never cleaned up)" % (len(leftover), size, staged))

        # ---- watchers: before the kill, then resumed from their last revision
        current = newest
        for w in watchers:
            rows = matching_rows(changes, w.pred, 0)
            check_watch("%s (before the kill)" % w.name, w.events, rows, w.since, w.last, problems)
            check_events_match_rows(w.name, w.events, rowmap, problems)
            expected = [rev for rev, _ in rows if rev > w.last]
            events, err = resume_watch(sock, w.query, w.last, expected[-1] if expected else current,
                                       last_event_id=w.resume_with_header)
            if err:
                problems.append("%s: %s" % (w.name, err))
            got = [e[0] for e in events]
            if got != expected:
                extra = sorted(set(got) - set(expected))
                missing = sorted(set(expected) - set(got))
                dup = len(got) - len(set(got))
                problems.append("%s resumed from %d: %d events, expected %d (missing %s, unexpected %s, repeated %d)"
                                % (w.name, w.last, len(got), len(expected), missing[:5], extra[:5], dup))
            check_events_match_rows(w.name + " (resumed)", events, rowmap, problems)
            # and from a point well before the kill: a replay across the restart
            if w.events:
                since = w.events[len(w.events) // 2][0]
                expected = [rev for rev, _ in rows if rev > since]
                events, err = resume_watch(sock, w.query, since, expected[-1] if expected else current)
                got = [e[0] for e in events]
                if err or got != expected:
                    problems.append("%s replayed from %d after the restart: %d events, expected %d%s"
                                    % (w.name, since, len(got), len(expected), "; " + err if err else ""))
                stats["watch_events"] = stats.get("watch_events", 0) + len(events)
            stats["watch_events"] = stats.get("watch_events", 0) + len(w.events) + len(events)
        return {did: draft_state(d) for did, d in ((d["id"].upper(), d) for d in body["drafts"])}
    finally:
        client.close()
        conn.close()


# --------------------------------------------------------------------------------------------
# A round


def resolve_inflight(ledger, observed):
    """Between two kills of one round: what was in flight is settled now (committed or not), so
    the next cycle's checks start from what the restarted daemon showed."""
    with ledger.lock:
        for w in ledger.writes.values():
            if w["state"] == "inflight":
                w["state"] = "unacked"
        for b in ledger.batches:
            if b["state"] == "inflight":
                b["state"] = "unacked"
        for did, rec in ledger.drafts.items():
            if rec["inflight"] is not None and did in observed:
                rec["acked"].append(observed[did])
            rec["inflight"] = None
        for did, st in observed.items():
            if did not in ledger.drafts and st["text"] in ledger.inflight_creates:
                ledger.drafts[did] = {"acked": [st], "inflight": None}
        ledger.inflight_creates = []
        ledger.failures = []


def run_round(n, args, rnd):
    workdir = tempfile.mkdtemp(prefix="prefsd-crash-")
    db = os.path.join(workdir, "prefs.sqlite")
    sock = os.path.join(workdir, "run", "prefsd.sock")
    log = os.path.join(workdir, "prefsd.log")
    extra = ["--durability", args.durability] + (["--progress-interval", "0.2"] if args.progress_flag else [])
    problems, stats = [], {"inflight": 0, "inflight_committed": 0, "watch_events": 0, "kills": 0, "restart_ms": 0.0}
    ledger = Ledger()
    daemon = Daemon(args.prefsd, db, sock, log, extra, log_level="warning")
    started = time.time()
    keys = ["%sk%d" % (KEY_PREFIX, i) for i in range(args.keys)]
    scopes = ["/accounts/a%d" % i for i in range(4)]
    try:
        status = daemon.start()
        for cycle in range(args.kills_per_round):
            ledger.killed, ledger.stop = threading.Event(), threading.Event()
            since = status["revision"]
            watchers = [
                Watcher(ledger, sock, "prefix-watch", "prefix=%s" % q(KEY_PREFIX), since),
                Watcher(ledger, sock, "account-watch", "account=%s" % ACCOUNT, since),
            ]
            watchers[0].pred = lambda row: row["key"] is not None and row["key"].startswith(KEY_PREFIX) and row["draft"] is None
            watchers[1].pred = lambda row: row["account"] == ACCOUNT
            watchers[1].resume_with_header = True
            watchers[0].reconnect_every = 150
            c = "c%d" % cycle
            workers = [PrefWorker(ledger, sock, random.Random(rnd.random()), "%sp%d" % (c, i), keys, scopes)
                       for i in range(args.pref_clients)]
            workers += [DraftWorker(ledger, sock, random.Random(rnd.random()), "%sd%d" % (c, i))
                        for i in range(args.draft_clients)]
            # 64 MiB in 1024 pieces, spread over more than twice the load time: cut by the kill
            pause = max(0.02, (2 * args.seconds_per_round + 10) / 1024)
            workers.append(TornUploader(ledger, sock, random.Random(rnd.random()), c + "torn", pause=pause))
            for t in watchers + workers:
                t.start()
            kill_after = rnd.uniform(0.3, 1.0) * args.seconds_per_round
            time.sleep(kill_after)
            ledger.killed.set()
            daemon.kill9()
            ledger.stop.set()
            stats["kills"] += 1
            stats["kill_after"] = kill_after
            for t in workers + watchers:
                t.join(20)
                if t.is_alive():
                    problems.append("client thread %s still blocked 20 s after the kill" % t.name)
            err = snapshot_integrity(db, workdir)
            if err:
                problems.append("integrity_check of the files as kill -9 left them: %s" % err)

            daemon = Daemon(args.prefsd, db, sock, log, extra, log_level="warning")
            restart_started = time.time()
            status = daemon.start()
            stats["restart_ms"] = max(stats["restart_ms"], (time.time() - restart_started) * 1000)
            problems.extend(ledger.failures)
            cstats = {}
            observed = verify(ledger, daemon, db, sock, watchers, status, problems, cstats)
            for k in ("inflight", "inflight_committed", "watch_events"):
                stats[k] += cstats.get(k, 0)
            for k in ("pref_lost", "draft_lost", "revision"):
                stats[k] = cstats.get(k, 0)
            resolve_inflight(ledger, observed)

        rc, secs = daemon.terminate()
        if rc != 0:
            problems.append("prefsd exited with %s on SIGTERM after %.1f s (want 0)" % (rc, secs))
        err = db_integrity(db)
        if err:
            problems.append("integrity_check after the graceful stop: %s" % err)
    except Exception as exc:  # the harness itself, or the daemon not coming back
        problems.append("round aborted: %s: %s" % (type(exc).__name__, exc))
        problems.extend(ledger.failures)
    finally:
        kill_all_live()
        problems = list(dict.fromkeys(problems))  # a loss seen again after a later kill is one loss
        if keep_or_remove(workdir, bool(problems) and args.keep_failed):
            problems.append("files kept in %s" % workdir)
    stats["pref_acked"] = ledger.counts["put"] + ledger.counts["batch_ops"]
    stats["draft_acked"] = ledger.counts["draft_ops"]
    stats["seconds"] = time.time() - started
    stats["failures"] = len(problems)
    return stats, problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--prefsd", default=default_binary("prefsd"))
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--seconds-per-round", type=float, default=3.0,
                    help="load time before the kill, which falls at a random point of its last 70%%")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--kills-per-round", type=int, default=1,
                    help="kill -9 and restart this many times on one database before the round ends")
    ap.add_argument("--time-limit", type=float, default=0, help="start no round after this many seconds (0: none)")
    ap.add_argument("--pref-clients", type=int, default=6)
    ap.add_argument("--draft-clients", type=int, default=3)
    ap.add_argument("--durability", choices=["full", "normal"], default="full",
                    help="prefsd --durability (both must survive a crash of the process)")
    ap.add_argument("--keys", type=int, default=12, help="keys shared by the preference clients")
    ap.add_argument("--keep-failed", action="store_true", help="keep a failed round's database and log")
    ap.add_argument("--verbose", "-v", action="store_true", help="print every violation, not the first 10")
    args = ap.parse_args()
    args.prefsd = os.path.abspath(args.prefsd)
    require_binary(args.prefsd, "prefsd", "crash-test")
    helptext = subprocess.run([args.prefsd, "--help"], capture_output=True, text=True).stdout
    args.progress_flag = "--progress-interval" in helptext
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    rnd = random.Random(seed)

    def on_signal(signum, frame):
        kill_all_live()
        sys.exit(128 + signum)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    print("crash-test: %s, %d rounds of %.1f s, seed %d" % (args.prefsd, args.rounds, args.seconds_per_round, seed), flush=True)
    t0 = time.time()
    totals = {"rounds": 0, "kills": 0, "acked": 0, "lost": 0, "inflight": 0, "inflight_committed": 0, "failures": 0, "failed_rounds": 0}
    all_problems = []
    try:
        for n in range(1, args.rounds + 1):
            if args.time_limit and time.time() - t0 > args.time_limit:
                print("crash-test: time limit reached after %d rounds" % (n - 1))
                break
            stats, problems = run_round(n, args, rnd)
            acked = stats.get("pref_acked", 0) + stats.get("draft_acked", 0)
            lost = stats.get("pref_lost", 0) + stats.get("draft_lost", 0)
            totals["rounds"] += 1
            totals["kills"] += stats.get("kills", 0)
            totals["acked"] += acked
            totals["lost"] += lost
            totals["inflight"] += stats.get("inflight", 0)
            totals["inflight_committed"] += stats.get("inflight_committed", 0)
            totals["failures"] += len(problems)
            totals["failed_rounds"] += 1 if problems else 0
            print("round %3d: %d kill(s), the last after %.2fs at revision %s; acked %d (prefs %d, drafts %d), lost %d, "
                  "in flight %d (%d committed), watch events %d, restart %.0f ms, %s"
                  % (n, stats.get("kills", 0), stats.get("kill_after", 0), stats.get("revision", "?"), acked, stats.get("pref_acked", 0),
                     stats.get("draft_acked", 0), lost, stats.get("inflight", 0), stats.get("inflight_committed", 0),
                     stats.get("watch_events", 0), stats.get("restart_ms", 0),
                     "OK" if not problems else "%d VIOLATION(S)" % len(problems)), flush=True)
            print_problems(problems, args.verbose, "--verbose")
            all_problems.extend(problems)
    finally:
        kill_all_live()

    print()
    print_pairs([("rounds", totals["rounds"]),
                 ("kill -9 + restart", totals["kills"]),
                 ("writes acknowledged", totals["acked"]),
                 ("acknowledged writes lost", totals["lost"]),
                 ("in flight at kill", totals["inflight"]),
                 ("  of which committed", totals["inflight_committed"]),
                 ("rounds with violations", totals["failed_rounds"]),
                 ("violations", totals["failures"]),
                 ("time", "%.1f s" % (time.time() - t0))], 28)
    print("crash-test: %s (seed %d)" % ("FAILED" if all_problems else "passed", seed))
    return 1 if all_problems else 0


if __name__ == "__main__":
    sys.exit(main())

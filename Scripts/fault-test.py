#!/usr/bin/env python3
"""Fault harness for prefsd: a full disk, bad database files, a socket in use vs a stale one,
and a graceful stop under load.

Each case runs on its own temp folder with its own daemon(s), and cleans up after itself even when
it fails (daemons killed, mounts unmounted, immutable flags cleared, folders removed):

  disk-full      as root, a 8 MiB tmpfs holds the database; acknowledged writes (preferences, a
                 batch, a draft with an attachment) first, then a filler file (dd) leaves a little
                 room and large PUTs, batches, draft edits and uploads go on until writes fail.
                 Every failed write must be a 507 `storage_full` error JSON (never a 500, never a
                 crash or a hang); reads keep answering with the last acknowledged values (and the
                 attachment's bytes); once the filler is removed, every kind of write succeeds
                 again; SIGTERM -> exit 0; every acknowledged write is in the change log at its
                 revision; PRAGMA integrity_check = ok; no staged upload left behind.
                 SKIPPED (with the reason) when not root or when mount is refused.
  bad-db         prefsd must exit at once (< 5 s) with status 1, a message on stderr that names
                 the file and says what is wrong, no socket left, and the database file (and any
                 -wal/-shm that was there) byte-identical, for: a read-only database (chattr +i as
                 root; and chmod 0444 with prefsd run as uid 65534 through setpriv), a real
                 database cut in half, random bytes, and a real database with a migration row
                 (grdb_migrations) this build does not know. New -wal/-shm files left beside the
                 database are reported too.
  socket         a second prefsd on the same database exits 1 naming the owner's pid; a second
                 prefsd on another database but the live daemon's socket path exits 1 and leaves
                 the live daemon answering; after kill -9 the stale socket file is cleaned up by
                 the next start, which serves the same data; SIGTERM -> exit 0, socket removed.
  graceful-stop  16 writer threads (PUTs, batches, draft edits, uploads) and 8 SSE watchers, then
                 SIGTERM mid-load: prefsd exits 0 within 5 s; every request got a complete 2xx,
                 a clean 503 `shutting_down`, or found the connection refused/closed before it was
                 sent (anything else is listed: no answer after the request was fully sent, a
                 truncated answer, another status); every watch stream ended with `event:
                 shutdown`; after a restart every acknowledged write is there (GET values and
                 change-log rows), no refused write was stored, integrity_check = ok.

Standard library only. Exits non-zero on any violation (a skipped case is not a violation).

    Scripts/fault-test.py
    Scripts/fault-test.py --only disk-full -v
    Scripts/fault-test.py --prefsd .build/debug/prefsd --prefsctl .build/debug/prefsctl --only socket --only bad-db
    Scripts/fault-test.py --only bad-db/not-sqlite --only bad-db/newer-schema   # single bad files
    Scripts/fault-test.py --only graceful-stop --keep -v                        # keep a failed case's files
"""

import argparse
import errno
import hashlib
import http.client
import json
import os
import random
import select
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
from prefsd_harness import (CLEANUPS, Client, Daemon, SSEStream, cleanup, db_integrity,  # noqa: E402
                            default_binary, error_code, keep_or_remove, parse_head, parse_json, print_pairs,
                            print_problems, q, require_binary, ro_connect, staged_uploads)

VERBOSE = False


def log(msg):
    if VERBOSE:
        print("    . " + msg, flush=True)


# --------------------------------------------------------------------------------------------
# Mounts and database files


def mount_tmpfs(path, size):
    """Mounts a tmpfs of `size` at path; returns None, or why it could not."""
    os.makedirs(path, exist_ok=True)
    if os.geteuid() != 0:
        return "not root (uid %d): cannot mount a tmpfs" % os.geteuid()
    if not shutil.which("mount"):
        return "no mount command"
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%s,mode=0700" % size, "tmpfs", path],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return "mount -t tmpfs refused: %s" % (r.stderr.strip() or "status %d" % r.returncode)

    def unmount():
        for _ in range(20):
            if subprocess.run(["umount", path], capture_output=True).returncode == 0:
                return
            time.sleep(0.1)
        subprocess.run(["umount", "-l", path], capture_output=True)
    CLEANUPS.append(unmount)
    return None


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def db_files(db):
    """sha256 of the database and of any -wal/-shm beside it."""
    return {suffix: sha256_file(db + suffix) for suffix in ("", "-wal", "-shm") if os.path.exists(db + suffix)}


def change_row(db, revision):
    conn = ro_connect(db)
    conn.row_factory = sqlite3.Row
    try:
        r = conn.execute("SELECT * FROM change WHERE revision = ?", (revision,)).fetchone()
        return dict(r) if r else None
    finally:
        conn.close()


def check_acked_in_log(db, acked, problems, label):
    """acked: list of (revision, key, scope, value). Each must be a `set` row at its revision."""
    conn = ro_connect(db)
    conn.row_factory = sqlite3.Row
    try:
        for rev, key, scope, value in acked:
            r = conn.execute("SELECT kind, key, scope, value FROM change WHERE revision = ?", (rev,)).fetchone()
            if r is None or r["kind"] != "set" or r["key"] != key or r["scope"] != scope or json.loads(r["value"]) != value:
                problems.append("%s: acknowledged write of %s at %s (revision %d) is not in the change log at that revision: %s"
                                % (label, key, scope, rev, "no row" if r is None else "%s %s %s" % (r["kind"], r["key"], r["scope"])))
    finally:
        conn.close()


# --------------------------------------------------------------------------------------------
# Case 1: disk full


class Ledger:
    """Acknowledged writes of one daemon's life: prefs (last value per key/scope) and drafts."""

    def __init__(self):
        self.prefs = {}      # (key, scope) -> (value, revision)
        self.log = []        # (revision, key, scope, value) for every acked set
        self.drafts = {}     # draft id -> {"revision", "text", "attachments": {aid: (sha, size)}}
        self.blobs = {}      # sha -> bytes

    def ack_set(self, key, scope, value, rev):
        self.prefs[(key, scope)] = (value, rev)
        self.log.append((rev, key, scope, value))


def classify_write(what, status, body, raw, problems, counts):
    """A write's answer on a filling disk: 2xx, or 507 storage_full. Returns 'ok', 'full' or 'bad'."""
    if 200 <= status < 300:
        counts["ok"] += 1
        return "ok"
    if status == 507 and error_code(body) == "storage_full" and isinstance(body["error"].get("message"), str):
        counts["full"] += 1
        return "full"
    counts["bad"] += 1
    problems.append("%s answered %s %r (want 2xx or 507 storage_full)" % (what, status, raw[:300]))
    return "bad"


def put_pref(c, ledger, key, scope, value, problems, counts, what=None):
    st, body, raw = c.json("PUT", "/v1/prefs/%s?scope=%s" % (q(key), q(scope)), value)
    r = classify_write(what or "PUT %s" % key, st, body, raw, problems, counts)
    if r == "ok":
        ledger.ack_set(key, scope, value, body["revision"])
    return r


def batch_prefs(c, ledger, ops, problems, counts):
    st, body, raw = c.json("POST", "/v1/prefs:batch",
                           {"operations": [{"op": "set", "key": k, "scope": s, "value": v} for k, s, v in ops]})
    r = classify_write("POST /v1/prefs:batch", st, body, raw, problems, counts)
    if r == "ok":
        revs = body.get("revisions") or []
        if len(revs) != len(ops):
            problems.append("batch answered revisions %r for %d operations" % (revs, len(ops)))
        for (k, s, v), rev in zip(ops, revs):
            ledger.ack_set(k, s, v, rev)
    return r


def create_draft(c, ledger, text, problems, counts):
    st, body, raw = c.json("POST", "/v1/drafts", {"account": "fault", "text": text})
    r = classify_write("POST /v1/drafts", st, body, raw, problems, counts)
    if r == "ok":
        ledger.drafts[body["id"]] = {"revision": body["revision"], "text": text, "attachments": {}}
        return body["id"]
    return None


def edit_draft(c, ledger, did, text, problems, counts):
    d = ledger.drafts[did]
    st, body, raw = c.json("PATCH", "/v1/drafts/%s" % did, {"text": text}, {"If-Match": str(d["revision"])})
    r = classify_write("PATCH draft", st, body, raw, problems, counts)
    if r == "ok":
        d["revision"], d["text"] = body["revision"], text
    return r


def upload(c, ledger, did, data, problems, counts):
    d = ledger.drafts[did]
    st, body, raw = c.json("POST", "/v1/drafts/%s/attachments?filename=f.bin&kind=file" % did, data,
                           {"If-Match": str(d["revision"]), "Content-Type": "application/octet-stream"})
    r = classify_write("upload of %d bytes" % len(data), st, body, raw, problems, counts)
    if r == "ok":
        att = body["attachment"]
        sha = hashlib.sha256(data).hexdigest()
        if att.get("sha256") != sha:
            problems.append("upload answered sha256 %s, sent %s" % (att.get("sha256"), sha))
        d["attachments"][att["id"]] = (sha, len(data))
        d["revision"] = body["draft"]["revision"]
        ledger.blobs[sha] = data
    return r


def check_reads(c, ledger, problems, label):
    """Every acknowledged value is what the daemon answers; drafts and attachment bytes too."""
    bad = 0
    for (key, scope), (value, rev) in ledger.prefs.items():
        st, body, raw = c.json("GET", "/v1/prefs/%s?scope=%s" % (q(key), q(scope)))
        if st != 200 or body.get("value") != value or body.get("source") != "scope:" + scope:
            bad += 1
            if bad <= 5:
                problems.append("%s: GET %s at %s answered %s %r, last acknowledged revision %d"
                                % (label, key, scope, st, raw[:200], rev))
    for did, d in ledger.drafts.items():
        st, body, raw = c.json("GET", "/v1/drafts/%s" % did)
        if st != 200 or body.get("revision") != d["revision"] or body.get("text") != d["text"]:
            problems.append("%s: GET draft %s answered %s %r, acknowledged revision %d" % (label, did, st, raw[:200], d["revision"]))
            continue
        have = {a["id"]: a["sha256"] for a in body.get("attachments", [])}
        if have != {aid: sha for aid, (sha, _) in d["attachments"].items()}:
            problems.append("%s: draft %s has attachments %r, acknowledged %r" % (label, did, have, d["attachments"]))
        for aid, (sha, size) in d["attachments"].items():
            st, data = c.request("GET", "/v1/drafts/%s/attachments/%s/data" % (did, aid))
            if st != 200 or hashlib.sha256(data).hexdigest() != sha:
                problems.append("%s: download of attachment %s answered %s, %d bytes (want %d, sha256 %s)"
                                % (label, aid, st, len(data), size, sha[:12]))
    return bad


def case_disk_full(args, work):
    mnt = os.path.join(work, "mnt")
    why = mount_tmpfs(mnt, "8m")
    if why:
        return "SKIP", [why], {}
    db = os.path.join(mnt, "prefs.sqlite")
    sock = os.path.join(work, "run", "prefsd.sock")
    daemon = Daemon(args.prefsd, db, sock, os.path.join(work, "prefsd.log"))
    problems, info = [], {}
    counts = {"ok": 0, "full": 0, "bad": 0}
    ledger = Ledger()
    rnd = random.Random(1)
    daemon.start()
    c = Client(sock, timeout=20)

    # 1. writes acknowledged while there is room
    for i in range(20):
        put_pref(c, ledger, "fault.small%d" % i, "/", {"i": i, "v": "before"}, problems, counts)
    batch_prefs(c, ledger, [("fault.batch%d" % i, "/accounts/a", i) for i in range(5)], problems, counts)
    did = create_draft(c, ledger, "before the disk fills", problems, counts)
    if did:
        upload(c, ledger, did, os.urandom(300_000), problems, counts)
    if counts["full"] or counts["bad"]:
        problems.append("writes failed before the disk was filled")

    # 2. a filler leaves ~1.5 MiB; large values, batches, edits and uploads until writes fail
    filler = os.path.join(mnt, "filler")
    vfs = os.statvfs(mnt)
    free = vfs.f_bavail * vfs.f_frsize
    fill_mib = max(0, free // (1 << 20) - 2)
    subprocess.run(["dd", "if=/dev/zero", "of=" + filler, "bs=1M", "count=%d" % fill_mib],
                   capture_output=True)
    vfs = os.statvfs(mnt)
    info["free after filler"] = "%d KiB" % (vfs.f_bavail * vfs.f_frsize // 1024)
    log("filler %d MiB, %s free" % (fill_mib, info["free after filler"]))
    first_full = None
    n = 0
    started = time.time()
    while time.time() - started < 20 and n < 400:
        n += 1
        big = "%06d" % n + "x" * rnd.randint(20_000, 60_000)
        r = n % 8
        if r < 5:
            res = put_pref(c, ledger, "fault.big%d" % (n % 24), "/", big, problems, counts)
        elif r == 5:
            res = batch_prefs(c, ledger, [("fault.big%d" % (n % 24), "/accounts/b", big[:20000]),
                                          ("fault.batch0", "/accounts/a", n)], problems, counts)
        elif r == 6 and did:
            res = edit_draft(c, ledger, did, "edit %d %s" % (n, "y" * 2000), problems, counts)
        elif did:
            res = upload(c, ledger, did, os.urandom(rnd.randint(100_000, 400_000)), problems, counts)
        else:
            continue
        if not daemon.alive():
            problems.append("prefsd died while the disk filled (status %s):\n%s" % (daemon.proc.returncode, daemon.log_tail()))
            return "FAIL", problems, info
        if res == "full" and first_full is None:
            first_full = n
            log("first storage_full after %d writes" % n)
        if first_full is not None and n - first_full >= 16:
            break
    info["writes before full"] = first_full
    if first_full is None:
        problems.append("the disk never filled: %d writes all acknowledged" % n)
    # every kind of write on the full disk: 507 storage_full (or, if a little room is left, 2xx)
    full_phase = {"ok": 0, "full": 0, "bad": 0}
    put_pref(c, ledger, "fault.tiny", "/", 1, problems, full_phase, "small PUT on a full disk")
    batch_prefs(c, ledger, [("fault.small0", "/", "on a full disk")], problems, full_phase)
    create_draft(c, ledger, "on a full disk", problems, full_phase)
    if did:
        edit_draft(c, ledger, did, "edit on a full disk", problems, full_phase)
        upload(c, ledger, did, os.urandom(200_000), problems, full_phase)
    st, body, raw = c.json("DELETE", "/v1/prefs/%s" % q("fault.small1"))
    if st != 507 or error_code(body) != "storage_full":
        if 200 <= st < 300:
            ledger.prefs.pop(("fault.small1", "/"), None)
        else:
            problems.append("DELETE on a full disk answered %s %r (want 507 storage_full or 2xx)" % (st, raw[:200]))
    info["full-disk answers"] = "%d x 507, %d x 2xx" % (full_phase["full"], full_phase["ok"])
    for k in counts:
        counts[k] += full_phase[k]

    # 3. reads go on, with the last acknowledged values
    if not daemon.alive():
        problems.append("prefsd died on the full disk (status %s):\n%s" % (daemon.proc.returncode, daemon.log_tail()))
        return "FAIL", problems, info
    st, body, raw = c.json("GET", "/v1/status")
    if st != 200:
        problems.append("GET /v1/status on a full disk answered %s %r" % (st, raw[:200]))
    check_reads(c, ledger, problems, "full disk")
    if not daemon.alive():
        problems.append("prefsd died while reading on a full disk")
        return "FAIL", problems, info

    # 4. space comes back: every kind of write works again, at once
    os.unlink(filler)
    again = {"ok": 0, "full": 0, "bad": 0}
    put_pref(c, ledger, "fault.after", "/", "space is back", problems, again, "PUT after freeing space")
    batch_prefs(c, ledger, [("fault.after%d" % i, "/accounts/c", i) for i in range(3)], problems, again)
    d2 = create_draft(c, ledger, "after freeing space", problems, again)
    if did:
        edit_draft(c, ledger, did, "edit after freeing space", problems, again)
        upload(c, ledger, did, os.urandom(250_000), problems, again)
    for i in range(5):
        put_pref(c, ledger, "fault.big%d" % i, "/", "small again %d" % i, problems, again)
    if again["ok"] != sum(again.values()):
        problems.append("after the filler was removed, %d of %d writes still failed (%d x 507): the daemon does not "
                        "recover when space returns" % (again["full"] + again["bad"], sum(again.values()), again["full"]))
    info["writes after freeing"] = "%d/%d ok" % (again["ok"], sum(again.values()))
    check_reads(c, ledger, problems, "after freeing space")
    c.close()

    # 5. graceful stop, then the files
    rc, secs = daemon.terminate()
    info["stop"] = "exit %s in %.1f s" % (rc, secs)
    if rc != 0:
        problems.append("SIGTERM: prefsd exited with %s after %.1f s (want 0):\n%s" % (rc, secs, daemon.log_tail(10)))
    err = db_integrity(db)
    if err:
        problems.append("integrity_check after the stop: %s" % err)
    check_acked_in_log(db, ledger.log, problems, "after the stop")
    staged, left = staged_uploads(db)
    if left:
        problems.append("%d staged upload file(s) left in %s" % (len(left), staged))
    info["writes"] = "%d acknowledged, %d refused 507, %d other" % (counts["ok"], counts["full"], counts["bad"])
    if "500" in daemon.log_text() or "internal" in daemon.log_text():
        log("daemon log mentions 500/internal:\n" + daemon.log_tail())
    return ("FAIL" if problems else "PASS"), problems, info


# --------------------------------------------------------------------------------------------
# Case 2: bad database files


def make_real_db(args, folder, values=300):
    """A database written by this prefsd (values of ~1 KiB, so it spans many pages), stopped."""
    os.makedirs(folder, exist_ok=True)
    db = os.path.join(folder, "prefs.sqlite")
    d = Daemon(args.prefsd, db, os.path.join(folder, "mk.sock"), os.path.join(folder, "mk.log"))
    d.start()
    c = Client(d.sock)
    for i in range(0, values, 50):
        ops = [{"op": "set", "key": "bad.k%d" % j, "scope": "/", "value": "v" * 1000} for j in range(i, i + 50)]
        st, _, raw = c.json("POST", "/v1/prefs:batch", {"operations": ops})
        if st != 200:
            raise RuntimeError("making a real database: batch answered %s %r" % (st, raw[:200]))
    c.close()
    rc, _ = d.terminate()
    if rc != 0:
        raise RuntimeError("making a real database: prefsd exited %s on SIGTERM" % rc)
    return db


def run_refused(args, db, sock, log_path, prefix=(), timeout=10.0):
    """Starts prefsd expecting it to refuse; returns (status or None, seconds, stderr text)."""
    d = Daemon(args.prefsd, db, sock, log_path, prefix=prefix)
    t0 = time.time()
    d.spawn()
    try:
        rc = d.proc.wait(timeout)
    except subprocess.TimeoutExpired:
        rc = None
    secs = time.time() - t0
    d.kill9()
    return rc, secs, d.log_text()


def check_refusal(label, rc, secs, text, db, sock, before, after, words, problems):
    if rc is None:
        problems.append("%s: prefsd still running 10 s later (did it start on it?)" % label)
    elif rc != 1:
        problems.append("%s: prefsd exited with %s (want 1): %s" % (label, rc, text.strip()[-400:]))
    elif secs > 5:
        problems.append("%s: prefsd took %.1f s to refuse (want at once)" % (label, secs))
    lines = [l for l in text.splitlines() if l.strip()]
    if not lines:
        problems.append("%s: nothing on stderr" % label)
    elif not any(db in l for l in lines) or not any(any(w in l.lower() for w in words) for l in lines):
        problems.append("%s: the message does not name the file and say what is wrong (%s): %r"
                        % (label, "/".join(words), text.strip()[-400:]))
    for suffix, sha in before.items():
        if after.get(suffix) != sha:
            problems.append("%s: %s%s changed (sha256 %s -> %s)" % (label, os.path.basename(db), suffix, sha[:12],
                                                                     (after.get(suffix) or "gone")[:12]))
    for suffix in set(after) - set(before):
        size = os.path.getsize(db + suffix)
        problems.append("%s: prefsd left a new %s%s (%d bytes) beside the refused database" % (label, os.path.basename(db), suffix, size))
    if os.path.exists(sock):
        problems.append("%s: the socket %s exists after the refusal" % (label, sock))
    msg = next((l for l in lines if "cannot start" in l or "error" in l), lines[-1] if lines else "")
    return msg.strip()


def case_bad_db(args, work):
    problems, info = [], {}
    skipped = []
    real = make_real_db(args, os.path.join(work, "real"))
    real_size = os.path.getsize(real)
    leftovers = [s for s in ("-wal", "-shm") if os.path.exists(real + s)]
    if leftovers:
        log("after a graceful stop the real database still has %s" % leftovers)
    variants = []

    wanted = set(o.split("/", 1)[1] for o in (args.only or []) if o.startswith("bad-db/"))
    if not wanted or "bad-db" in (args.only or []):
        wanted = set(BAD_DB_VARIANTS)

    def variant(name):
        if name not in wanted:
            return None, None, None
        folder = os.path.join(work, name)
        os.makedirs(folder)
        return folder, os.path.join(folder, "prefs.sqlite"), os.path.join(folder, "run", "prefsd.sock")

    def copy_real(db):
        for s in ("", "-wal", "-shm"):
            if os.path.exists(real + s):
                shutil.copyfile(real + s, db + s)

    # read-only, root: chattr +i (root bypasses permission bits)
    folder, db, sock = variant("readonly-chattr")
    if db is None:
        pass
    elif os.geteuid() != 0 or not shutil.which("chattr"):
        skipped.append("read-only (chattr +i): %s" % ("not root" if os.geteuid() else "no chattr"))
    else:
        copy_real(db)
        r = subprocess.run(["chattr", "+i", db], capture_output=True, text=True)
        if r.returncode != 0:
            skipped.append("read-only (chattr +i): chattr refused: %s" % r.stderr.strip())
        else:
            CLEANUPS.append(lambda db=db: subprocess.run(["chattr", "-i", db], capture_output=True))
            variants.append(("read-only (chattr +i)", db, sock, (), ["read-only", "readonly", "permission", "not permitted"]))

    # read-only, another uid: chmod 0444 on files uid 65534 owns, prefsd run as 65534
    folder, db, sock = variant("readonly-uid")
    if db is None:
        pass
    elif os.geteuid() != 0 or not shutil.which("setpriv"):
        skipped.append("read-only (0444, uid 65534): %s" % ("not root" if os.geteuid() else "no setpriv"))
    else:
        probe = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "test", "-x", args.prefsd],
                               capture_output=True, text=True)
        if probe.returncode != 0:
            skipped.append("read-only (0444, uid 65534): uid 65534 cannot run %s (%s)" % (args.prefsd, probe.stderr.strip() or "no access"))
        else:
            copy_real(db)
            os.chmod(work, 0o755)
            for path in [folder] + [db + s for s in ("", "-wal", "-shm") if os.path.exists(db + s)]:
                os.chown(path, 65534, 65534)
            os.chmod(db, 0o444)
            variants.append(("read-only (0444, uid 65534)", db, sock,
                             ("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"),
                             ["read-only", "readonly", "permission", "not permitted"]))

    folder, db, sock = variant("truncated")
    if db:
        with open(real, "rb") as f:
            data = f.read()
        with open(db, "wb") as f:
            f.write(data[:len(data) // 2])
        variants.append(("truncated (%d of %d bytes)" % (len(data) // 2, real_size), db, sock, (),
                         ["corrupt", "malformed", "truncated", "not a database"]))

    folder, db, sock = variant("not-sqlite")
    if db:
        with open(db, "wb") as f:
            f.write(random.Random(2).randbytes(64 * 1024))
        variants.append(("not SQLite (random bytes)", db, sock, (), ["not a sqlite", "not sqlite", "not a database"]))

    folder, db, sock = variant("newer-schema")
    if db:
        copy_real(db)
        conn = sqlite3.connect(db)   # the row GRDB's migrator records for each applied migration
        conn.execute("INSERT INTO grdb_migrations (identifier) VALUES ('9999_from_a_newer_prefsd')")
        conn.commit()
        conn.close()
        variants.append(("newer schema (migration 9999)", db, sock, (), ["newer"]))

    for label, db, sock, prefix, words in variants:
        before = db_files(db)
        rc, secs, text = run_refused(args, db, sock, os.path.join(os.path.dirname(db), "prefsd.log"), prefix)
        after = db_files(db)
        n = len(problems)
        msg = check_refusal(label, rc, secs, text, db, sock, before, after, words, problems)
        info[label] = "%s: exit %s in %.2f s: %s" % ("ok" if len(problems) == n else "FAILED", rc, secs, msg[-160:])
    for s in skipped:
        info[s.split(":")[0]] = "SKIPPED: " + s.split(":", 1)[1].strip()
    if problems:
        return "FAIL", problems, info
    return ("PASS" if variants else "SKIP"), skipped, info


# --------------------------------------------------------------------------------------------
# Case 3: socket in use vs stale


def case_socket(args, work):
    problems, info = [], {}
    db1, db2 = os.path.join(work, "one", "prefs.sqlite"), os.path.join(work, "two", "prefs.sqlite")
    sock, sock2 = os.path.join(work, "run", "prefsd.sock"), os.path.join(work, "run2", "prefsd.sock")
    a = Daemon(args.prefsd, db1, sock, os.path.join(work, "a.log"))
    a.start()
    c = Client(sock)
    st, body, raw = c.json("PUT", "/v1/prefs/sock.k?scope=/", "kept")
    if st != 200:
        problems.append("PUT on the first daemon answered %s %r" % (st, raw[:200]))
    c.close()

    # a second daemon on the same database (another socket): exit 1, naming the owner's pid
    rc, secs, text = run_refused(args, db1, sock2, os.path.join(work, "b.log"))
    if rc != 1 or secs > 5:
        problems.append("second prefsd on the same database: exit %s after %.1f s (want 1 at once): %r" % (rc, secs, text[-300:]))
    if str(a.proc.pid) not in text:
        problems.append("second prefsd on the same database: the message does not name the owner's pid %d: %r" % (a.proc.pid, text[-300:]))
    if os.path.exists(sock2):
        problems.append("second prefsd on the same database left its socket %s" % sock2)
    info["same database"] = "exit %s in %.2f s: %s" % (rc, secs, text.strip().splitlines()[-1][-150:] if text.strip() else "")

    # a second daemon on another database but the live daemon's socket: exit 1, live one unharmed
    rc, secs, text = run_refused(args, db2, sock, os.path.join(work, "c.log"))
    if rc != 1 or secs > 5:
        problems.append("second prefsd on the live socket: exit %s after %.1f s (want 1 at once): %r" % (rc, secs, text[-300:]))
    if "socket" not in text.lower() and sock not in text:
        problems.append("second prefsd on the live socket: the message does not say the socket is in use: %r" % text[-300:])
    info["same socket"] = "exit %s in %.2f s: %s" % (rc, secs, text.strip().splitlines()[-1][-150:] if text.strip() else "")
    if not os.path.exists(sock):
        problems.append("the live daemon's socket file was removed by the refused second daemon")
    try:
        c = Client(sock, timeout=5)
        st, body, raw = c.json("GET", "/v1/prefs/sock.k?scope=/")
        c.close()
        if st != 200 or body.get("value") != "kept":
            problems.append("the live daemon answers %s %r after the refused second start" % (st, raw[:200]))
    except (OSError, http.client.HTTPException) as exc:
        problems.append("the live daemon no longer answers after the refused second start: %r" % exc)

    # kill -9: the stale socket file stays; the next start cleans it up and serves
    a.kill9()
    if not os.path.exists(sock):
        info["note"] = "no socket file left by kill -9 (nothing stale to clean)"
    else:
        info["stale socket"] = "left by kill -9"
    d = Daemon(args.prefsd, db1, sock, os.path.join(work, "d.log"))
    try:
        t0 = time.time()
        d.start(timeout=10)
        info["restart over the stale socket"] = "ready in %.2f s" % (time.time() - t0)
        c = Client(sock)
        st, body, raw = c.json("GET", "/v1/prefs/sock.k?scope=/")
        c.close()
        if st != 200 or body.get("value") != "kept":
            problems.append("after the restart over the stale socket, GET answered %s %r" % (st, raw[:200]))
    except RuntimeError as exc:
        problems.append("prefsd did not start over the stale socket file: %s" % exc)
    rc, secs = d.terminate()
    if rc != 0:
        problems.append("SIGTERM: exit %s (want 0)" % rc)
    if os.path.exists(sock):
        problems.append("the socket file is still there after a graceful stop")
    return ("FAIL" if problems else "PASS"), problems, info


# --------------------------------------------------------------------------------------------
# Case 4: graceful stop under load


class Outcomes:
    def __init__(self):
        self.lock = threading.Lock()
        self.counts = {}
        self.violations = []
        self.sigterm_at = None

    def add(self, kind, detail=None):
        with self.lock:
            self.counts[kind] = self.counts.get(kind, 0) + 1
            if detail:
                self.violations.append(detail)


class RawClient:
    """Keep-alive HTTP/1.1 over the Unix socket that tells exactly what happened to a request:
      ('answer', status, body)            a complete answer
      ('refused', why)                    no connection (refused, no socket file): nothing sent
      ('closed-before-send', why)         the kept-alive connection was closed by the server before
                                          the request was written (seen as EOF before sending), or
                                          writing it failed part way (server closed it, unread)
      ('no-answer', why)                  the request was fully sent, the connection ended with no
                                          byte of answer
      ('truncated', why, bytes)           part of an answer, then the end."""

    def __init__(self, path, timeout=15.0):
        self.path, self.timeout, self.sock = path, timeout, None
        self.reused = False

    def close(self):
        if self.sock:
            try:
                self.sock.close()
            except OSError:
                pass
            self.sock = None

    def _server_closed(self):
        r, _, _ = select.select([self.sock], [], [], 0)
        if not r:
            return False
        try:
            return self.sock.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True

    def request(self, method, path, body=None, headers=None, pace=None):
        """pace=(bytes, seconds): send the body that many bytes at a time, pausing between."""
        if body is not None and not isinstance(body, (bytes, bytearray)):
            body = json.dumps(body).encode()
            headers = dict(headers or {}, **{"Content-Type": "application/json"})
        if self.sock is not None and self._server_closed():
            self.close()   # the server hung up on the idle connection: open a new one
            self.reused = False
        if self.sock is None:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(self.timeout)
            try:
                s.connect(self.path)
            except OSError as exc:
                s.close()
                return ("refused", "%s" % errno.errorcode.get(exc.errno, exc))
            self.sock = s
            self.reused = False
        else:
            self.reused = True
        head = "%s %s HTTP/1.1\r\nHost: prefsd\r\nContent-Length: %d\r\n" % (method, path, len(body or b""))
        head += "".join("%s: %s\r\n" % kv for kv in (headers or {}).items()) + "\r\n"
        sent = 0
        try:
            if pace:
                self.sock.sendall(head.encode())
                while sent < len(body):
                    self.sock.sendall(body[sent:sent + pace[0]])
                    sent += pace[0]
                    time.sleep(pace[1])
            else:
                self.sock.sendall(head.encode() + (body or b""))
        except OSError as exc:
            self.close()
            if pace:
                return ("cut", "the connection was cut after %d of %d body bytes: %s"
                        % (min(sent, len(body)), len(body), errno.errorcode.get(exc.errno, exc)))
            return ("closed-before-send", "send failed part way: %s" % errno.errorcode.get(exc.errno, exc))
        sent_at = time.time()
        raw = b""
        try:
            while b"\r\n\r\n" not in raw:
                chunk = self.sock.recv(65536)
                if not chunk:
                    self.close()
                    if raw:
                        return ("truncated", "the head was cut", raw[:200])
                    return ("no-answer", "EOF after the whole request was sent (%s connection)"
                            % ("kept-alive" if self.reused else "new"), sent_at)
                raw += chunk
            head_b, rest = raw.split(b"\r\n\r\n", 1)
            status, hdrs = parse_head(head_b)
            if "chunked" in hdrs.get("transfer-encoding", "").lower():
                body_b = b""
                while True:
                    while b"\r\n" not in rest:
                        chunk = self.sock.recv(65536)
                        if not chunk:
                            self.close()
                            return ("truncated", "chunked body cut", head_b[:100])
                        rest += chunk
                    line, rest = rest.split(b"\r\n", 1)
                    size = int(line.split(b";")[0] or b"0", 16)
                    while len(rest) < size + 2:
                        chunk = self.sock.recv(65536)
                        if not chunk:
                            self.close()
                            return ("truncated", "chunked body cut", head_b[:100])
                        rest += chunk
                    body_b += rest[:size]
                    rest = rest[size + 2:]
                    if size == 0:
                        break
            else:
                n = int(hdrs.get("content-length", "0"))
                while len(rest) < n:
                    chunk = self.sock.recv(65536)
                    if not chunk:
                        self.close()
                        return ("truncated", "%d of %d body bytes" % (len(rest), n), head_b[:100])
                    rest += chunk
                body_b = rest[:n]
        except socket.timeout:
            self.close()
            return ("no-answer", "no answer within %.0f s (%s connection)" % (self.timeout, "kept-alive" if self.reused else "new"), sent_at)
        except OSError as exc:
            self.close()
            if raw:
                return ("truncated", "reading: %s" % errno.errorcode.get(exc.errno, exc), raw[:200])
            return ("no-answer", "reading: %s after the whole request was sent" % errno.errorcode.get(exc.errno, exc), sent_at)
        if hdrs.get("connection", "").lower() == "close":
            self.close()
        return ("answer", status, body_b)


class LoadWorker(threading.Thread):
    """Writes until the daemon is gone. kind: put | batch | draft | upload."""

    def __init__(self, idx, kind, sock, out, stop):
        super().__init__(name="w%d-%s" % (idx, kind), daemon=True)
        self.idx, self.kind, self.out, self.stop = idx, kind, out, stop
        self.client = RawClient(sock)
        self.rnd = random.Random(idx)
        self.seq = 0
        self.acked = []       # (revision, key, scope, value)
        self.refused = []     # values of writes refused with 503 (must not be stored)
        self.last_value = {}  # (key, scope) -> (value, revision) of the last acknowledged write
        self.unsure = set()   # (key, scope) whose last write got no answer
        self.draft = None     # {"id", "revision", "text"}
        self.draft_unsure = False
        self.done_reason = None
        self.go = threading.Event()   # slow_upload: when to start
        self.slow_done, self.slow_result = False, None
        self.unanswered = []  # (description, "prefs", [values]) or (description, "draft", (id, revision before))
        self.last_unanswered = None

    def send(self, method, path, body=None, headers=None, pace=None):
        """Returns the decoded JSON of a 2xx answer, 'refused-503', or None when the daemon is gone."""
        r = self.client.request(method, path, body, headers, pace)
        label = "%s %s" % (method, path.split("?")[0])
        t = self.out.sigterm_at
        when = "%+.3f s from SIGTERM" % (time.time() - t) if t else "before SIGTERM"
        if r[0] == "answer":
            status, data = r[1], r[2]
            parsed = parse_json(data)
            if 200 <= status < 300:
                self.out.add("2xx")
                return parsed
            if status == 503 and error_code(parsed) == "shutting_down":
                self.out.add("503 shutting_down")
                return "refused-503"
            self.out.add("other status", "%s: answered %s %r (%s)" % (label, status, data[:200], when))
            return "other"
        if r[0] in ("refused", "closed-before-send"):
            self.out.add(r[0])
            if t is None:
                self.out.add("error before SIGTERM", "%s: %s %s before SIGTERM" % (label, r[0], r[1]))
            self.done_reason = r[0]
            return None
        if r[0] == "cut":
            self.out.add("upload cut", "%s: %s (%s)" % (label, r[1], when))
            self.done_reason = "cut"
            return "no-answer"
        if r[0] == "no-answer":
            sent = r[2]
            why = r[1]
            if "ECONNRESET" in why:
                why += " (on a Unix socket: the server closed it with the request unread in its buffer)"
            elif "EOF" in why:
                why += " (the server read the request, then closed without answering)"
            self.out.add("no answer after sent")
            self.last_unanswered = "%s: %s; sent %s" % (label, why, ("%+.3f s from SIGTERM" % (sent - t)) if t else "before SIGTERM")
            self.done_reason = "no-answer"
            return "no-answer"
        self.out.add("truncated", "%s: truncated answer: %s %r (%s)" % (label, r[1], r[2], when))
        self.done_reason = "truncated"
        return "no-answer"

    def run(self):
        try:
            while True:
                if self.done_reason in ("refused",):
                    return
                if self.done_reason is not None:
                    self.done_reason = None   # try once more on a new connection: refused ends it
                if self.stop.is_set():
                    return
                getattr(self, "do_" + self.kind)()
        except Exception as exc:  # the harness itself
            self.out.add("harness error", "%s: %r" % (self.name, exc))

    def value(self):
        self.seq += 1
        return {"w": "%s-%d" % (self.name, self.seq), "n": self.seq}

    def do_put(self):
        key, scope = "gs.p%d.k%d" % (self.idx, self.rnd.randrange(4)), self.rnd.choice(["/", "/accounts/a"])
        v = self.value()
        r = self.send("PUT", "/v1/prefs/%s?scope=%s" % (q(key), q(scope)), v)
        self.settle([(key, scope, v)], r, lambda b: [b["revision"]])

    def do_batch(self):
        ops = [("gs.b%d.k%d" % (self.idx, i), "/accounts/b", self.value()) for i in range(self.rnd.randint(2, 5))]
        r = self.send("POST", "/v1/prefs:batch", {"operations": [{"op": "set", "key": k, "scope": s, "value": v} for k, s, v in ops]})
        self.settle(ops, r, lambda b: b["revisions"])

    def settle(self, ops, r, revisions):
        if isinstance(r, dict):
            for (k, s, v), rev in zip(ops, revisions(r)):
                self.acked.append((rev, k, s, v))
                self.last_value[(k, s)] = (v, rev)
                self.unsure.discard((k, s))
        elif r == "refused-503":
            self.refused.extend(v for _, _, v in ops)
        elif r in ("no-answer",):
            self.unsure.update((k, s) for k, s, _ in ops)
            self.unanswered.append((self.last_unanswered, "prefs", [v for _, _, v in ops]))

    def do_draft(self, upload=False):
        if self.draft is None or self.draft_unsure:
            text = "%s-%d" % (self.name, self.seq)
            self.seq += 1
            r = self.send("POST", "/v1/drafts", {"account": "gs%d" % self.idx, "text": text})
            if isinstance(r, dict):
                self.draft = {"id": r["id"], "revision": r["revision"], "text": text, "attachments": []}
                self.draft_unsure = False
            return
        d = self.draft
        if upload and self.rnd.random() < 0.5:
            data = os.urandom(self.rnd.randint(50_000, 400_000))
            r = self.send("POST", "/v1/drafts/%s/attachments?filename=f.bin&kind=file" % d["id"], data,
                          {"If-Match": str(d["revision"]), "Content-Type": "application/octet-stream"})
            if isinstance(r, dict):
                d["revision"] = r["draft"]["revision"]
                d["attachments"].append((r["attachment"]["id"], hashlib.sha256(data).hexdigest()))
        else:
            self.seq += 1
            text = "%s-%d" % (self.name, self.seq)
            r = self.send("PATCH", "/v1/drafts/%s" % d["id"], {"text": text}, {"If-Match": str(d["revision"])})
            if isinstance(r, dict):
                d["revision"], d["text"] = r["revision"], text
        if r == "no-answer":
            self.unanswered.append((self.last_unanswered, "draft", (d["id"], d["revision"])))
            self.draft_unsure = True   # its state is unknown now: check it no further
            self.draft = dict(d, unsure=True)

    def do_upload(self):
        self.do_draft(upload=True)

    def do_slow_upload(self):
        """One 3 MiB upload sent over ~0.8 s, started just before SIGTERM: an in-flight request
        the daemon must finish (201) or refuse cleanly (503), not cut."""
        if self.draft is None:
            self.do_draft()
            return
        if self.slow_done:
            self.stop.wait(0.05)
            return
        self.go.wait()
        d = self.draft
        data = os.urandom(3 << 20)
        self.slow_done = True
        r = self.send("POST", "/v1/drafts/%s/attachments?filename=slow.bin&kind=file" % d["id"], data,
                      {"If-Match": str(d["revision"]), "Content-Type": "application/octet-stream"},
                      pace=(64 << 10, 0.8 / 48))
        self.slow_result = r if isinstance(r, str) else "201" if isinstance(r, dict) else repr(r)
        if isinstance(r, dict):
            d["revision"] = r["draft"]["revision"]
            d["attachments"].append((r["attachment"]["id"], hashlib.sha256(data).hexdigest()))
        elif r == "no-answer":
            self.draft = dict(d, unsure=True)


class LoadWatcher(threading.Thread):
    def __init__(self, idx, sock, query, out):
        super().__init__(name="watch%d" % idx, daemon=True)
        self.sock, self.query, self.out = sock, query, out
        self.events, self.final, self.error, self.clean_end = [], None, None, False

    def run(self):
        try:
            stream = SSEStream(self.sock, "/v1/watch?%s" % self.query)
        except (OSError, ValueError) as exc:
            self.error = "could not start: %r" % exc
            return
        if stream.status != 200:
            self.error = "answered %s %r" % (stream.status, stream.error_body)
            return
        try:
            deadline = None
            for ev in stream.events():
                if self.out.sigterm_at and deadline is None:
                    deadline = time.time() + 10
                if deadline and time.time() > deadline:
                    self.error = "still open 10 s after SIGTERM"
                    break
                if ev is None:
                    continue
                if ev["event"] in ("progress",):
                    continue
                self.final = ev
                if ev["event"] in ("shutdown", "overflow", "error"):
                    continue
                self.events.append(int(ev["id"]))
            self.clean_end = stream.clean_end
        finally:
            stream.close()


def canon(v):
    return v["w"]


def case_graceful_stop(args, work):
    problems, info = [], {}
    db = os.path.join(work, "prefs.sqlite")
    sock = os.path.join(work, "run", "prefsd.sock")
    daemon = Daemon(args.prefsd, db, sock, os.path.join(work, "prefsd.log"))
    daemon.start()
    out = Outcomes()
    stop = threading.Event()
    kinds = ["put"] * 7 + ["batch"] * 4 + ["draft"] * 2 + ["upload"] * 2 + ["slow_upload"]
    workers = [LoadWorker(i, k, sock, out, stop) for i, k in enumerate(kinds)]
    queries = ["prefix=gs.", "prefix=gs.p0.", "prefix=gs.p1.", "prefix=gs.b7.", "prefix=gs.b8.",
               "account=gs11", "account=gs14", "prefix=gs.p2.&scope=/accounts/a"]
    watchers = [LoadWatcher(i, sock, qy, out) for i, qy in enumerate(queries)]
    for w in watchers:
        w.start()
    time.sleep(0.3)
    for w in workers:
        w.start()
    time.sleep(max(0.1, args.load_seconds - 0.25))
    for w in workers:
        w.go.set()   # the slow upload starts now, ~0.25 s before SIGTERM, and needs ~0.8 s
    time.sleep(0.25)
    out.sigterm_at = time.time()
    os.kill(daemon.proc.pid, signal.SIGTERM)
    try:
        rc = daemon.proc.wait(15)
    except subprocess.TimeoutExpired:
        rc = None
    secs = time.time() - out.sigterm_at
    info["stop"] = "exit %s in %.2f s" % (rc, secs)
    if rc is None:
        problems.append("prefsd still running 15 s after SIGTERM (killed):\n%s" % daemon.log_tail(10))
    elif rc != 0:
        problems.append("prefsd exited with %s after SIGTERM (want 0):\n%s" % (rc, daemon.log_tail(10)))
    elif secs > 5:
        problems.append("prefsd took %.1f s to stop after SIGTERM (want <= 5 s)" % secs)
    daemon.kill9()
    stop.set()
    for t in workers + watchers:
        t.join(20)
        if t.is_alive():
            problems.append("client thread %s still blocked 20 s after the stop" % t.name)

    info["requests"] = ", ".join("%s %d" % kv for kv in sorted(out.counts.items()))
    info["slow upload across SIGTERM"] = ", ".join(str(w.slow_result) for w in workers if w.kind == "slow_upload")
    for v in out.violations:
        problems.append("request: " + v)
    ends = {}
    for w in watchers:
        end = "error: " + w.error if w.error else (w.final["event"] if w.final else "nothing")
        ends[end] = ends.get(end, 0) + 1
        if w.error or not w.final or w.final["event"] != "shutdown":
            problems.append("watch %s (%d events) ended with %s, not a final shutdown event" % (w.query, len(w.events), end))
        elif not w.clean_end:
            problems.append("watch %s: after the shutdown event the chunked stream was not ended cleanly" % w.query)
    info["watch ends"] = ", ".join("%s %d" % kv for kv in ends.items())
    info["watch events"] = sum(len(w.events) for w in watchers)

    # after a restart: every acknowledged write is there, no refused write stored
    restart = Daemon(args.prefsd, db, sock, os.path.join(work, "prefsd2.log"))
    restart.start()
    c = Client(sock)
    acked = [a for w in workers for a in w.acked]
    info["acknowledged"] = "%d preference writes, %d drafts" % (len(acked), sum(1 for w in workers if w.draft))
    check_acked_in_log(db, acked, problems, "after restart")
    conn = ro_connect(db)
    stored_values = set()   # the "w" id of every value the change log holds
    for (text,) in conn.execute("SELECT value FROM change WHERE key LIKE 'gs.%' AND value IS NOT NULL"):
        v = json.loads(text)
        if isinstance(v, dict) and "w" in v:
            stored_values.add(v["w"])
    revs = [r[0] for r in conn.execute("SELECT revision FROM change ORDER BY revision")]
    conn.close()
    for w in workers:
        for (k, s), (v, rev) in w.last_value.items():
            if (k, s) in w.unsure:
                continue
            st, body, raw = c.json("GET", "/v1/prefs/%s?scope=%s" % (q(k), q(s)))
            if st != 200 or body.get("value") != v:
                problems.append("after restart, GET %s at %s answered %s %r; last acknowledged %r (revision %d)" % (k, s, st, raw[:200], v, rev))
        for v in w.refused:
            if canon(v) in stored_values:
                problems.append("a write refused with 503 was stored: %r" % v)
        for text, kind, what in w.unanswered:
            if kind == "prefs":
                applied = [canon(v) in stored_values for v in what]
                verdict = "applied" if all(applied) else ("not applied" if not any(applied) else "HALF applied")
            else:
                st, body, raw = c.json("GET", "/v1/drafts/%s" % what[0])
                verdict = ("not applied" if st == 200 and body.get("revision") == what[1] else
                           "applied" if st == 200 else "draft answered %s" % st)
            problems.append("request: %s — after restart: %s" % (text, verdict))
        d = w.draft
        if d and not d.get("unsure"):
            st, body, raw = c.json("GET", "/v1/drafts/%s" % d["id"])
            if st != 200 or body.get("revision") != d["revision"] or body.get("text") != d["text"]:
                problems.append("after restart, draft %s answered %s %r; acknowledged revision %d" % (d["id"], st, raw[:200], d["revision"]))
            elif [(a["id"], a["sha256"]) for a in sorted(body.get("attachments", []), key=lambda a: a["position"])] != d["attachments"]:
                problems.append("after restart, draft %s has other attachments than acknowledged" % d["id"])
    if revs and revs != list(range(revs[0], revs[-1] + 1)):
        problems.append("change log revisions have gaps")
    seen = set(revs)
    for w in watchers:
        phantom = [r for r in w.events if r not in seen]
        if phantom:
            problems.append("watch %s got events not in the change log after restart: %s" % (w.query, phantom[:5]))
    c.close()
    rc2, _ = restart.terminate()
    if rc2 != 0:
        problems.append("second SIGTERM: exit %s" % rc2)
    err = db_integrity(db)
    if err:
        problems.append("integrity_check: %s" % err)
    return ("FAIL" if problems else "PASS"), problems, info


# --------------------------------------------------------------------------------------------

BAD_DB_VARIANTS = ["readonly-chattr", "readonly-uid", "truncated", "not-sqlite", "newer-schema"]

CASES = [
    ("disk-full", case_disk_full),
    ("bad-db", case_bad_db),
    ("socket", case_socket),
    ("graceful-stop", case_graceful_stop),
]


def main():
    global VERBOSE
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--prefsd", default=default_binary("prefsd"))
    ap.add_argument("--prefsctl", default=default_binary("prefsctl"),
                    help="checked to exist; the cases talk HTTP themselves")
    ap.add_argument("--only", action="append", metavar="CASE",
                    choices=[n for n, _ in CASES] + ["bad-db/" + v for v in BAD_DB_VARIANTS],
                    help="run only this case (repeatable): " + ", ".join(n for n, _ in CASES)
                    + "; or one bad file: " + ", ".join("bad-db/" + v for v in BAD_DB_VARIANTS))
    ap.add_argument("--load-seconds", type=float, default=1.5, help="graceful-stop: load before SIGTERM")
    ap.add_argument("--keep", action="store_true", help="keep a failed case's folder")
    ap.add_argument("--verbose", "-v", action="store_true", help="print progress and every violation")
    args = ap.parse_args()
    VERBOSE = args.verbose
    args.prefsd = os.path.abspath(args.prefsd)
    args.prefsctl = os.path.abspath(args.prefsctl)
    require_binary(args.prefsd, "prefsd", "fault-test", wait=120)
    require_binary(args.prefsctl, "prefsctl", "fault-test", wait=120)

    def on_signal(signum, frame):
        raise SystemExit(128 + signum)   # the case's finally below cleans up
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    print("fault-test: %s" % args.prefsd, flush=True)
    t0 = time.time()
    rows = []
    for name, fn in CASES:
        if args.only and name not in args.only and not any(o.startswith(name + "/") for o in args.only):
            continue
        work = tempfile.mkdtemp(prefix="prefsd-fault-%s-" % name)
        started = time.time()
        keep = False
        result, problems, info = "FAIL", ["interrupted"], {}
        try:
            result, problems, info = fn(args, work)
        except Exception as exc:
            import traceback
            result, problems, info = "FAIL", ["case aborted: %s: %s" % (type(exc).__name__, exc)], {}
            if VERBOSE:
                traceback.print_exc()
        finally:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)   # let the cleanup finish
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            cleanup("fault-test")
            keep = keep_or_remove(work, result == "FAIL" and args.keep)
            signal.signal(signal.SIGTERM, on_signal)
            signal.signal(signal.SIGINT, on_signal)
        secs = time.time() - started
        rows.append((name, result, secs, problems))
        print("%-14s %-4s %5.1f s" % (name, result, secs), flush=True)
        print_pairs(info.items(), 30, "    ")
        print_problems(problems, VERBOSE or result == "SKIP", "-v", "-" if result == "FAIL" else "skip:", "      ")
        if keep:
            print("    files kept in %s" % work)

    print()
    print("%-14s %-6s %8s  %s" % ("case", "result", "time", "violations"))
    for name, result, secs, problems in rows:
        print("%-14s %-6s %6.1f s  %s" % (name, result, secs, len(problems) if result == "FAIL" else "-"))
    failed = [r for r in rows if r[1] == "FAIL"]
    print("fault-test: %s in %.1f s" % ("FAILED (%s)" % ", ".join(r[0] for r in failed) if failed else "passed", time.time() - t0))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

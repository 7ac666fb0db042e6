#!/usr/bin/env python3
"""The browser console (/ui/) in headless Chromium, against a running prefsd.

    console-test.py --url http://127.0.0.1:PORT --socket SOCK --prefsctl PREFSCTL \\
        --token-file TOKEN [--screenshots DIR] [--device-url URL --device-token-file TOKEN]

The daemon listens on --url (TCP) with --token-file's admin token, and on --socket, which this
script's prefsctl uses to set up its data (schemas, values at three scope levels, a draft with
a PNG, 10 000 keys, a reader token) and to change keys behind the page's back. It checks, each
printed as `ok - …` or `FAIL - …`: sign-in by a `prefsctl ui` link (once only, for a scope, or
read-only) and by a pasted token, a wrong token refused, a reload keeping the tab's session and
a sign-out ending it on the server; three levels of scopes; the explanation of a key; a valid and an invalid
edit; a stale save resolved both ways; a change made by prefsctl shown on the open page through
its open watch; a dropped watch resumed with `Last-Event-ID`, so a change made while it was down shows
without a reload; lock and unlock; history, diff and revert; the audit log's filters; the sync
page (no upstream; a conflict two devices' pushes made, its loser put back by keyboard); a draft's
image as a thumbnail; export and import (replace lists what it removes); a reader seeing no editing
control, and its write from the page refused with 403; 10 000 keys paged and found by prefix;
light and dark; and no Content-Security-Policy violation nor unexpected error in the browser's
log. With --device-url, a device daemon of it (`prefsd --upstream`, syncing as the writer token
console-device at /accounts/alice, listening there with --device-token-file's admin token): its
sync page's status. Ends with `N passed, M failed`; exits 1 if any check failed.

Needs Debian's python3-selenium, chromium and chromedriver (/usr/bin/chromedriver).
"""

import argparse
import json
import os
import pwd
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.parse
import urllib.request
import zlib

from selenium import webdriver
from selenium.common.exceptions import (NoSuchElementException, StaleElementReferenceException, TimeoutException,
                                        WebDriverException)
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

WAIT = 10           # seconds any element may take to appear
SECRET_KEY = "prefsd.console.secret"   # the sessionStorage item of the session secret
SCHEMAS = {
    "timeline.fontSize": {"type": "int", "default": 14, "min": 8, "max": 72, "description": "Points"},
    "timeline.mode": {"type": "enum", "choices": ["collapsed", "expanded"], "default": "collapsed"},
    "ui.dark": {"type": "bool", "default": False, "description": "Dark UI"},
    "ui.signature": {"type": "string", "maxLength": 40, "description": "Signature under posts"},
    "ui.layout": {"type": "json", "default": {"columns": 2}},
}
BULK_KEYS = 10_000
# Cuts a page's watch from the browser's side. Chrome's network emulation (offline) fails new
# requests but leaves a stream already open running, and net-internals' "Flush socket pools"
# leaves an HTTP/1.1 socket in use alone; so the test wraps the page's fetch() to give each
# request for /v1/watch?scope=SCOPE an abort signal of its own besides the page's, and
# consoleTestCutter.cut() aborts them: Chrome closes the connection, and the page's reader fails
# as on a lost network. The console's code is not changed; restore() puts fetch() back.
CUT_WATCHES_JS = """
    const scope = arguments[0];
    if (!window.consoleTestCutter) {
      const realFetch = window.fetch;
      const open = new Set();
      window.consoleTestCutter = {
        scope,
        cut() {
          const count = open.size;
          for (const controller of open) controller.abort(new TypeError("network error (cut by console-test)"));
          open.clear();
          return count;
        },
        restore() {
          window.fetch = realFetch;
          delete window.consoleTestCutter;
        },
      };
      window.fetch = function (input, init = {}) {
        const url = new URL(input instanceof Request ? input.url : String(input), location.href);
        if (url.pathname !== "/v1/watch" || url.searchParams.get("scope") !== window.consoleTestCutter?.scope) {
          return realFetch.call(this, input, init);
        }
        const controller = new AbortController();
        open.add(controller);
        const signal = init.signal ? AbortSignal.any([init.signal, controller.signal]) : controller.signal;
        return realFetch.call(this, input, { ...init, signal });
      };
    }
    window.consoleTestCutter.scope = scope;
"""


def tid(name):
    """The CSS selector of a data-testid."""
    return f'[data-testid="{name}"]'


def png(width, height, rgb):
    """A PNG of one colour, made with zlib and struct."""
    def chunk(tag, data):
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)
    rows = b"".join(b"\x00" + bytes(rgb) * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


class ConsoleTest:
    def __init__(self, args):
        self.args = args
        self.url = args.url.rstrip("/")
        self.failures = []
        self.passed = 0
        self.scratch = tempfile.mkdtemp(prefix="console-test-")
        self.downloads = os.path.join(self.scratch, "downloads")
        os.mkdir(self.downloads)
        self.screens = args.screenshots
        if self.screens:
            os.makedirs(self.screens, exist_ok=True)
        self.admin_token = open(args.token_file).read().strip()
        self.user = pwd.getpwuid(os.getuid()).pw_name
        self.run_id = str(int(time.time() * 1000))[-8:]
        options = webdriver.ChromeOptions()
        for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,900"):
            options.add_argument(argument)
        # The performance log holds Chrome's Network events: the headers a request really had.
        options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
        options.add_experimental_option("perfLoggingPrefs", {"enableNetwork": True, "enablePage": False})
        options.add_experimental_option("prefs", {
            "download.default_directory": self.downloads,
            "download.prompt_for_download": False,
        })
        self.driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
        self.driver.execute_cdp_cmd("Page.setDownloadBehavior", {"behavior": "allow", "downloadPath": self.downloads})

    # ---------------------------------------------------------------------------------------
    # Reporting

    def check(self, what, condition, detail=""):
        print(("ok - " if condition else "FAIL - ") + what + ("" if condition else f": {detail}"), flush=True)
        if condition:
            self.passed += 1
        else:
            self.failures.append(what)
        return condition

    def section(self, name, body, allowed_statuses=(), allowed_errors=()):
        """Runs one group of checks; an exception fails it. Then reads the browser's log."""
        try:
            body()
        except (TimeoutException, NoSuchElementException, WebDriverException, AssertionError,
                subprocess.CalledProcessError, OSError, ValueError, KeyError) as error:
            text = str(error).strip().splitlines()[0] if str(error).strip() else ""
            line = [frame.lineno for frame in traceback.extract_tb(error.__traceback__) if frame.filename == __file__][-1]
            self.check(f"{name} (stopped)", False, f"line {line}: {type(error).__name__}: {text}")
        self.check_log(name, allowed_statuses, allowed_errors)

    def check_log(self, name, allowed_statuses=(), allowed_errors=()):
        """No CSP violation, and no SEVERE entry but the HTTP refusals (or the errors, regular
        expressions) the section provoked."""
        problems = []
        for entry in self.driver.get_log("browser"):
            message = entry["message"]
            if "Content Security Policy" in message or "Refused to" in message:
                problems.append(message)
            elif entry["level"] == "SEVERE":
                status = re.search(r"status of (\d{3})", message)
                if not (status and int(status.group(1)) in allowed_statuses
                        or any(re.search(pattern, message) for pattern in allowed_errors)):
                    problems.append(message)
        self.check(f"{name}: no CSP violation or unexpected error in the browser's log", not problems, "; ".join(problems)[:800])

    def screenshot(self, name):
        if self.screens:
            self.driver.save_screenshot(os.path.join(self.screens, name))

    # ---------------------------------------------------------------------------------------
    # prefsctl

    def ctl(self, *arguments):
        """prefsctl over the socket; its standard output, stripped."""
        result = subprocess.run([self.args.prefsctl, "--socket", self.args.socket, *arguments],
                                check=True, capture_output=True, text=True)
        return result.stdout.strip()

    def network_events(self):
        """Chrome's Network events since the last call (the performance log): (method, params)."""
        messages = (json.loads(entry["message"])["message"] for entry in self.driver.get_log("performance"))
        return [(m["method"], m["params"]) for m in messages if m["method"].startswith("Network.")]

    def get(self, key, scope):
        return json.loads(self.ctl("get", key, "--scope", scope))

    def write_file(self, name, data):
        path = os.path.join(self.scratch, name)
        with open(path, "wb" if isinstance(data, bytes) else "w") as file:
            file.write(data)
        return path

    # ---------------------------------------------------------------------------------------
    # The page

    def wait(self, condition, what, timeout=WAIT):
        return WebDriverWait(self.driver, timeout, poll_frequency=0.02,
                             ignored_exceptions=(StaleElementReferenceException,)).until(condition, what)

    def find(self, css, within=None):
        return (within or self.driver).find_element(By.CSS_SELECTOR, css)

    def find_all(self, css, within=None):
        return (within or self.driver).find_elements(By.CSS_SELECTOR, css)

    def visible(self, css):
        """Waits for a displayed element."""
        return self.wait(lambda d: next((e for e in self.find_all(css) if e.is_displayed()), False), f"{css} shown")

    def text_of(self, css):
        elements = self.find_all(css)
        return elements[0].text if elements else None

    def open(self, route, title):
        """Goes to a route (the hash) and waits for its page, titled `title`, to be drawn anew."""
        target = f"{self.url}/ui/{route}"
        self.redrawn(lambda: self.driver.refresh() if self.driver.current_url == target else self.driver.get(target), title)

    def redrawn(self, action, title):
        """Does `action`, then waits for the page it leads to, titled `title`, to replace the one before."""
        before = self.find_all(tid("page-title"))
        action()

        def drawn(driver):
            if before:
                try:
                    before[0].is_enabled()
                    return False   # the page before is still there
                except StaleElementReferenceException:
                    pass
            return self.text_of(tid("page-title")) == title and not self.find("main").get_attribute("aria-busy")
        self.wait(drawn, f"page {title!r}")

    def click(self, css):
        element = self.visible(css)
        self.driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", element)
        element.click()
        return element

    def set_input(self, value):
        control = self.visible(tid("value-input"))
        control.clear()
        control.send_keys(value)
        return control

    def confirm(self, expect_in_message):
        """Waits for the confirmation dialog, checks its message, and confirms."""
        message = self.visible(tid("confirm-message")).text
        self.check(f"the confirmation says {expect_in_message!r}", expect_in_message in message, message)
        self.click(tid("confirm-ok"))
        self.wait(lambda d: not self.find_all(tid("confirm-dialog")), "the dialog closed")
        return message

    def sign_out(self):
        if self.find_all(tid("signout")) and self.find(tid("signout")).is_displayed():
            self.click(tid("signout"))
        self.visible(tid("token-input"))

    def sign_in_with_token(self, token):
        """Signs in on the sign-in page, where the console is."""
        field = self.visible(tid("token-input"))
        field.send_keys(token)
        self.click(tid("signin-submit"))

    def signed_in_as(self, role):
        info = self.visible(tid("session-info")).text
        self.wait(lambda d: self.find_all(tid("scope-node")), "the scope tree")
        return role in info

    def row(self, key):
        """The scope page's row of `key`, or None."""
        return next((r for r in self.find_all(tid("key-row")) if r.get_attribute("data-key") == key), None)

    def draft_row(self, draft):
        """The drafts page's row of `draft`, or None."""
        return next((r for r in self.find_all(tid("draft-row")) if r.get_attribute("data-draft") == draft), None)

    # ---------------------------------------------------------------------------------------
    # Data

    def set_up(self):
        self.ctl("schema", "load", self.write_file("schemas.json", json.dumps(SCHEMAS)))
        for key, value, scope in [
            ("timeline.fontSize", "13", "/"),
            ("timeline.fontSize", "12", "/accounts"),
            ("ui.dark", "true", "/accounts"),
            ("timeline.fontSize", "16", "/accounts/alice"),
            ("ui.signature", '"Alice"', "/accounts/alice/threads/t1"),
        ]:
            self.ctl("set", key, value, "--scope", scope)
        self.ctl("unlock", "timeline.fontSize", "--scope", "/accounts")
        self.reader_token = self.ctl("token", "create", f"console-reader-{self.run_id}", "--role", "reader")
        self.draft = self.ctl("drafts", "create", "--account", "alice", "--text", "Hello from the console test", "--thread", "t1")
        image = self.write_file("red.png", png(24, 16, (220, 40, 40)))
        self.attachment = self.ctl("drafts", "attach", self.draft, image, "--alt", "A red rectangle")
        self.ctl("set", "compose.maxCharacters", "10", "--scope", "/accounts/alice/threads/t2")
        self.long_draft = self.ctl("drafts", "create", "--account", "alice", "--thread", "t2",
                                   "--text", "A draft much longer than ten characters")

    # ---------------------------------------------------------------------------------------
    # The checks

    def sign_in_checks(self):
        self.driver.get(f"{self.url}/ui/")
        self.visible(tid("token-input")).send_keys("not-a-token")
        self.click(tid("signin-submit"))
        error = self.wait(lambda d: self.text_of(tid("signin-error")), "the sign-in error")
        self.check("a wrong token is refused, in prefsd's words", bool(error) and self.find_all(tid("token-input")), error)
        self.screenshot("signin.png")

        link = self.ctl("ui", "--no-open")
        self.check("prefsctl ui prints a sign-in link", "/ui/#signin=" in link, link)
        as_json = json.loads(self.ctl("--json", "ui", "--no-open"))
        self.check("prefsctl --json ui prints its url and expiry",
                   "#signin=" in as_json.get("url", "") and as_json.get("expiresAt"), as_json)
        self.driver.get(link)
        self.check("a sign-in link signs in", self.signed_in_as("admin"), self.text_of(tid("session-info")))
        self.check("the code leaves the address bar", "signin=" not in self.driver.current_url, self.driver.current_url)
        storage = self.driver.execute_script("return [sessionStorage.length, sessionStorage.getItem(arguments[0]) !== null, "
                                             "localStorage.length, document.cookie]", SECRET_KEY)
        self.check("the session secret is in sessionStorage only (no localStorage, no cookie)",
                   storage == [1, True, 0, ""], storage)
        self.sign_out()
        self.driver.get(link)
        error = self.wait(lambda d: self.text_of(tid("signin-error")), "the refusal of a used link")
        self.check("a sign-in link works once", bool(error), error)

        self.sign_in_with_token(self.admin_token)
        self.check("a pasted token signs in", self.signed_in_as("admin"), self.text_of(tid("session-info")))
        self.check("the token is in no URL", self.admin_token not in self.driver.current_url)
        self.driver.refresh()
        self.check("a reload keeps the tab's session", self.signed_in_as("admin"), self.text_of(tid("session-info")))

    def session_end_checks(self):
        secret = self.driver.execute_script("return sessionStorage.getItem(arguments[0])", SECRET_KEY)
        self.sign_out()
        status = self.driver.execute_async_script("""
            const done = arguments[arguments.length - 1];
            fetch('/ui/session', {headers: {Authorization: 'Bearer ' + arguments[0]}}).then((r) => done(r.status), () => done(0));
        """, secret)
        self.check("signing out ends the session on the server too", status == 401, status)
        self.check("and leaves nothing in the tab's storage",
                   self.driver.execute_script("return sessionStorage.length + localStorage.length") == 0)

        self.driver.get(self.ctl("ui", "--no-open", "--scope", "/accounts/alice"))
        self.check("a link for a scope signs in there", self.signed_in_as("at /accounts/alice"), self.text_of(tid("session-info")))
        self.wait(lambda d: self.text_of(tid("page-title")) == "Scope /accounts/alice", "its scope's page first")
        nodes = {e.get_attribute("data-scope") for e in self.find_all(tid("scope-node"))}
        self.check("its scope tree starts at its scope", nodes and all(n.startswith("/accounts/alice") for n in nodes), sorted(nodes))
        self.open("#/key/timeline.fontSize?scope=/accounts/alice/threads/t1", "timeline.fontSize")
        above = [e.find_element(By.CSS_SELECTOR, ".layer-value").text for e in self.find_all(tid("chain-layer"))
                 if e.get_attribute("data-layer") in ("scope:/accounts", "scope:/")]
        self.check("its explanation does not show the layers above its scope", above == ["(above your scope)"] * 2, above)

    def scope_checks(self):
        self.open("#/", "Scope /")
        for scope, key, value, source in [
            ("/accounts", "ui.dark", "true", "scope:/accounts"),
            ("/accounts/alice", "timeline.fontSize", "16", "scope:/accounts/alice"),
            ("/accounts/alice/threads", "timeline.fontSize", "16", "scope:/accounts/alice"),
        ]:
            link = self.wait(lambda d: next((e for e in self.find_all(tid("scope-link")) if e.get_attribute("data-scope") == scope), False),
                             f"{scope} in the scope tree")
            link.click()
            self.wait(lambda d: self.text_of(tid("page-title")) == f"Scope {scope}", f"the page of {scope}")
            row = self.wait(lambda d: self.row(key), f"{key} at {scope}")
            shown = (self.find(tid("key-value"), row).text, self.find(tid("source-badge"), row).get_attribute("data-source"))
            self.check(f"the scope tree leads to {scope}, where {key} is {value} from {source}", shown == (value, source), shown)
            if scope == "/accounts/alice":
                counts = self.wait(lambda d: self.text_of(tid("scope-counts")), "the counts")
                self.check("a scope says how many values and locks it holds", "1 value" in counts and "0 locks" in counts, counts)
                self.screenshot("scopes.png")
        nodes = {e.get_attribute("data-scope") for e in self.find_all(tid("scope-node"))}
        self.check("the tree shows three levels below / (intermediate scopes too)",
                   {"/accounts", "/accounts/alice", "/accounts/alice/threads", "/accounts/alice/threads/t1"} <= nodes, sorted(nodes))

    def explain_checks(self):
        self.open("#/key/timeline.fontSize?scope=/accounts/alice/threads/t1", "timeline.fontSize")
        layers = [e.get_attribute("data-layer") for e in self.find_all(tid("chain-layer"))]
        expected = ["scope:/accounts/alice/threads/t1", "scope:/accounts/alice/threads", "scope:/accounts/alice",
                    "scope:/accounts", "scope:/", "default"]
        self.check("explain lists every layer, top to bottom", layers == expected, layers)
        winners = [e.get_attribute("data-layer") for e in self.find_all("li.winner")]
        self.check("explain marks the winning layer", winners == ["scope:/accounts/alice"], winners)
        self.check("the effective value is shown", self.text_of(tid("effective-value")) == "16", self.text_of(tid("effective-value")))

    def edit_checks(self):
        self.open("#/key/timeline.fontSize?scope=/accounts/alice", "timeline.fontSize")
        control = self.visible(tid("value-input"))
        self.check("an int is edited in a number field with its bounds",
                   (control.get_attribute("type"), control.get_attribute("min"), control.get_attribute("max")) == ("number", "8", "72"),
                   control.get_attribute("outerHTML"))
        self.screenshot("key.png")
        self.set_input("18").send_keys(Keys.ENTER)   # the keyboard submits the form
        self.wait(lambda d: self.text_of(tid("effective-value")) == "18", "the saved value")
        self.check("a valid edit is saved (typed and sent with the keyboard)", self.get("timeline.fontSize", "/accounts/alice") == 18)

        self.set_input("99")
        self.click(tid("save"))
        error = self.visible(tid("field-error"))
        control = self.find(tid("value-input"))
        beside = control.find_element(By.XPATH, "ancestor::div[contains(@class,'field')][1]")
        self.check("an invalid edit shows prefsd's error beside the field",
                   "at most 72" in error.text and error.get_attribute("id") in control.get_attribute("aria-describedby")
                   and self.find_all(tid("field-error"), beside), error.text)
        self.check("the invalid value was not stored", self.get("timeline.fontSize", "/accounts/alice") == 18)

    def live_checks(self):
        scope = "/accounts/alice"
        def watches_sent(events):
            """The page's watch requests among Chrome's Network events: request ID → URL."""
            return {params["requestId"]: params["request"]["url"] for method, params in events
                    if method == "Network.requestWillBeSent" and urllib.parse.urlsplit(params["request"]["url"]).path == "/v1/watch"}
        self.network_events()
        self.open("#/scope/accounts/alice", f"Scope {scope}")
        self.wait(lambda d: self.find(tid("live-indicator")).get_attribute("data-state") == "open", "the watch open")
        watches = watches_sent(self.network_events())
        self.driver.execute_script("window.consoleTestMarker = arguments[0]", self.run_id)
        self.ctl("set", "timeline.fontSize", "21", "--scope", scope)
        self.wait(lambda d: (r := self.row("timeline.fontSize")) and self.find(tid("key-value"), r).text == "21",
                  "the new value on the page")
        marked = self.wait(lambda d: "changed" in self.row("timeline.fontSize").get_attribute("class"), "the mark")
        events = self.network_events()
        streamed = any(method == "Network.dataReceived" and params["requestId"] in watches for method, params in events)
        rewatched = list(watches_sent(events).values())
        marker = self.driver.execute_script("return window.consoleTestMarker")
        # Live means through the watch already open, without a reload (how soon is the benchmark's
        # business, not a test's).
        self.check("a change made by prefsctl shows on the open page, marked, through the watch it had open",
                   marked and streamed and not rewatched and marker == self.run_id,
                   f"marked: {marked}, data on the open watch {list(watches.values())}: {streamed}, new watches: {rewatched}, marker: {marker}")

    def resume_checks(self):
        scope, key = "/accounts/bob", "ui.signature"
        seen_value, missed_value = f"seen {self.run_id}", f"missed {self.run_id}"
        self.ctl("set", key, json.dumps("first"), "--scope", scope)
        shown = lambda: (r := self.row(key)) and self.find(tid("key-value"), r).text
        state = lambda: self.find(tid("live-indicator")).get_attribute("data-state")
        # Wrapped in this document, before the page (a route, in the same document) opens its watch.
        self.driver.execute_script(CUT_WATCHES_JS, scope)
        self.open("#/scope/accounts/bob", f"Scope {scope}")
        if not self.driver.execute_script("return Boolean(window.consoleTestCutter)"):
            raise AssertionError("the page was loaded anew: the watch cutter is gone")
        try:
            self.wait(lambda d: state() == "open", "the watch open")
            seen = json.loads(self.ctl("--json", "set", key, json.dumps(seen_value), "--scope", scope))["revision"]
            self.wait(lambda d: shown() == json.dumps(seen_value), "the change seen live")
            title = self.find(tid("page-title"))
            self.driver.execute_script("window.consoleTestMarker = arguments[0]", self.run_id)

            # Offline for the watch's URL only (new requests fail with ERR_INTERNET_DISCONNECTED),
            # then the open stream is cut: the page retries, and fails, until back online.
            watches = {}   # requestId -> {"url", "headers", "status", "error"} of the page's watch
            def page_watch(url):
                parts = urllib.parse.urlsplit(url)
                return parts.path == "/v1/watch" and urllib.parse.parse_qs(parts.query).get("scope") == [scope]

            def read_network():
                for method, params in self.network_events():
                    if method == "Network.requestWillBeSent" and page_watch(params["request"]["url"]):
                        watches[params["requestId"]] = {"url": params["request"]["url"], "headers": dict(params["request"]["headers"])}
                    elif params.get("requestId") in watches:
                        watch = watches[params["requestId"]]
                        if method == "Network.requestWillBeSentExtraInfo":
                            watch["headers"].update(params["headers"])   # the headers as sent
                        elif method == "Network.responseReceived":
                            watch["status"] = params["response"]["status"]
                        elif method == "Network.loadingFailed":
                            watch["error"] = params["errorText"]
                return list(watches.values())

            self.network_events()   # from here on, the watch's requests are all after the cut
            self.driver.execute_cdp_cmd("Network.enable", {})
            self.driver.execute_cdp_cmd("Network.emulateNetworkConditionsByRule", {"matchedNetworkConditions": [{
                "urlPattern": f"{self.url}/v1/watch*", "offline": True,
                "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1}]})
            try:
                cut = self.driver.execute_script("return window.consoleTestCutter.cut()")
                if not cut:
                    raise AssertionError(f"no watch of {scope} was open to cut")
                self.wait(lambda d: state() != "open", "the watch shown down")
                self.wait(lambda d: any(w.get("error") == "net::ERR_INTERNET_DISCONNECTED" for w in read_network()),
                          "a reconnection refused while offline")
                down = state()
                missed = json.loads(self.ctl("--json", "set", key, json.dumps(missed_value), "--scope", scope))["revision"]
                answered = [w["status"] for w in read_network() if w.get("status")]
                self.check(f"the watch was down ({down}) while revision {missed} changed {key}",
                           down != "open" and not answered, f"watch {down}, reconnections answered {answered}")
            finally:
                self.driver.execute_cdp_cmd("Network.emulateNetworkConditionsByRule", {"matchedNetworkConditions": []})

            started = time.monotonic()
            try:
                self.wait(lambda d: shown() == json.dumps(missed_value), "the change made while down, on the page")
            except TimeoutException:
                pass   # told below, and the headers still looked at
            elapsed = time.monotonic() - started
            try:
                title.is_enabled()
                drawn_again = False
            except StaleElementReferenceException:
                drawn_again = True
            marker = self.driver.execute_script("return window.consoleTestMarker")
            self.check(f"back online, the page shows the change it missed, {elapsed:.2f} s later, without a reload or redraw",
                       shown() == json.dumps(missed_value) and marker == self.run_id and not drawn_again and state() == "open",
                       f"shown {shown()}, marker {marker}, drawn again {drawn_again}, watch {state()}")

            resumed = self.wait(lambda d: next((w for w in read_network() if w.get("status")), False), "the resumed watch in Chrome's log")
            header = lambda w: next((v for k, v in w["headers"].items() if k.lower() == "last-event-id"), None)
            sent = [(header(w), "since" in urllib.parse.parse_qs(urllib.parse.urlsplit(w["url"]).query)) for w in watches.values()]
            last_id = header(resumed)
            self.check(f"it resumed with Last-Event-ID {last_id} (at least {seen}, the change it had seen; below {missed}, the one it "
                       f"had not), answered {resumed.get('status')}; every retry sent it, none `since`",
                       resumed.get("status") == 200 and last_id is not None and last_id.isdigit() and seen <= int(last_id) < missed
                       and all(h == last_id and not since for h, since in sent),
                       f"answered {resumed.get('status')} to {resumed['url']}; (Last-Event-ID, since?) of each: {sent}")
        finally:
            self.driver.execute_script("window.consoleTestCutter?.restore()")

    def stale_round(self, mine, theirs):
        self.open("#/key/timeline.fontSize?scope=/accounts/alice", "timeline.fontSize")
        self.set_input(mine)
        self.ctl("set", "timeline.fontSize", theirs, "--scope", "/accounts/alice", "--reason", f"racing the console {theirs}")
        self.wait(lambda d: self.text_of(tid("effective-value")) == theirs, "their value, live")
        self.click(tid("save"))
        self.visible(tid("stale-panel"))
        shown = (self.text_of(tid("stale-mine")), self.text_of(tid("stale-theirs")))
        author = self.text_of(tid("stale-author"))
        self.check(f"a stale save shows both values ({mine} mine, {theirs} theirs) and who changed it",
                   shown == (mine, theirs) and self.user in author and f"racing the console {theirs}" in author, f"{shown} {author}")
        self.check("the typed value is kept after the refusal", self.find(tid("value-input")).get_attribute("value") == mine)

    def stale_checks(self):
        self.stale_round("30", "31")
        self.screenshot("stale.png")
        self.click(tid("stale-reapply"))
        self.wait(lambda d: self.text_of(tid("effective-value")) == "30", "mine re-applied")
        self.check("re-apply: the value is mine", self.get("timeline.fontSize", "/accounts/alice") == 30)

        self.stale_round("32", "33")
        self.click(tid("stale-keep"))
        self.wait(lambda d: not self.find(tid("stale-panel")).is_displayed(), "the panel closed")
        self.check("keep theirs: the value is theirs, and the field shows it",
                   self.get("timeline.fontSize", "/accounts/alice") == 33 and self.find(tid("value-input")).get_attribute("value") == "33")

    def lock_checks(self):
        below = [v for v in json.loads(self.ctl("dump", "--scope", "/accounts"))["values"]
                 if v["key"] == "timeline.fontSize" and v["scope"] != "/accounts"]
        self.open("#/key/timeline.fontSize?scope=/accounts", "timeline.fontSize")
        self.click(tid("lock"))
        n = len(below)
        self.confirm(f"Locking at /accounts pins 12 for every scope below it; "
                     f"{n} value{'' if n == 1 else 's'} set below {'is' if n == 1 else 'are'} hidden")
        self.visible(tid("unlock"))
        resolved = json.loads(self.ctl("--json", "get", "timeline.fontSize", "--scope", "/accounts/alice"))
        self.check("lock: /accounts/alice now reads the locked 12",
                   (resolved["value"], resolved["source"]) == (12, "lock:/accounts"), resolved)
        winners = [e.get_attribute("data-layer") for e in self.find_all("li.winner")]
        self.check("the page shows the lock winning", winners == ["lock:/accounts"], winners)
        self.click(tid("unlock"))
        self.confirm("Unlocking at /accounts")
        self.visible(tid("lock"))
        self.check("unlock: /accounts/alice reads its own 33 again", self.get("timeline.fontSize", "/accounts/alice") == 33)

    def history_checks(self):
        self.open("#/history/timeline.fontSize?scope=/accounts/alice", "History of timeline.fontSize")
        steps = self.find_all(tid("history-step"))
        cells = [[c.text for c in s.find_elements(By.TAG_NAME, "td")] for s in steps]
        authors = {c[6] for c in cells}
        self.check("history lists each change with who made it", len(steps) >= 6 and self.user in authors and len(authors) >= 2, cells[:8])
        by_value = {}
        for step, c in zip(steps, cells):
            if c[2] == "set at /accounts/alice":
                by_value.setdefault(self.find("code", step.find_elements(By.TAG_NAME, "td")[3]).text, step.get_attribute("data-revision"))
        Select(self.find(tid("diff-from"))).select_by_value(by_value["18"])
        Select(self.find(tid("diff-to"))).select_by_value(by_value["21"])
        self.click(tid("diff-submit"))
        self.wait(lambda d: self.text_of(tid("diff-after")) == "21", "the diff")
        self.check("a diff between two points shows both values", self.text_of(tid("diff-before")) == "18")
        self.screenshot("history.png")
        step = next(s for s in self.find_all(tid("history-step")) if s.get_attribute("data-revision") == by_value["18"])
        self.find(tid("revert-step"), step).click()
        self.confirm(f"back as it was at revision {by_value['18']}")
        self.wait(lambda d: (steps := self.find_all(tid("history-step"))) and "revert of" in steps[0].text, "the revert in the history")
        self.check("revert puts the value back", self.get("timeline.fontSize", "/accounts/alice") == 18)

    def audit_checks(self):
        self.open("#/audit", "Audit log")
        self.find(tid("audit-scope")).send_keys("/accounts/alice")
        self.find(tid("audit-prefix")).send_keys("timeline.")
        self.redrawn(lambda: self.click(tid("audit-apply")), "Audit log")
        self.check("the filters are in the address", "scope=/accounts/alice" in self.driver.current_url, self.driver.current_url)
        rows = [[c.text for c in r.find_elements(By.TAG_NAME, "td")] for r in self.find_all(tid("audit-row"))]
        self.check("the audit log filters by scope and prefix",
                   rows and all(r[3].startswith("timeline.") and r[4].startswith("/accounts/alice") for r in rows), rows[:5])
        self.open("#/audit?author=token:default&scope=/accounts", "Audit log")
        rows = [[c.text for c in r.find_elements(By.TAG_NAME, "td")] for r in self.find_all(tid("audit-row"))]
        self.check("the audit log filters by author", rows and all(r[7] == "token:default" for r in rows), rows[:5])
        self.screenshot("audit.png")

    def sync_post(self, token, body):
        """POST /v1/sync as a device (a named token) over the TCP listener; the answer's JSON."""
        request = urllib.request.Request(f"{self.url}/v1/sync", data=json.dumps(body).encode(), method="POST", headers={
            "Authorization": f"Bearer {token}", "Content-Type": "application/json", "Accept": "application/json"})
        with urllib.request.urlopen(request, timeout=WAIT) as answer:
            return json.load(answer)

    def sync_checks(self):
        scope, key = "/accounts/alice", "ui.theme"
        self.open("#/sync", "Sync")
        line = self.visible(tid("sync-none")).text
        self.check("a prefsd with no upstream says so on the sync page", "no upstream" in line and not self.find_all(tid("sync-status")), line)

        # A conflict without devices: two named writer tokens push the same key, both based on
        # nothing (base 0); the later stamp wins (lww), the other is kept as the loser.
        laptop, phone = f"laptop-{self.run_id}", f"phone-{self.run_id}"
        secrets = {name: self.ctl("token", "create", name, "--role", "writer", "--scope", scope) for name in (laptop, phone)}
        now = int(time.time() * 1000)
        outcomes = []
        for name, value, stamp in [(laptop, "dark", now - 2000), (phone, "light", now - 1000)]:
            answer = self.sync_post(secrets[name], {"cursor": 0, "mutations": [
                {"seq": 1, "key": key, "scope": scope, "value": value, "base": 0, "stamp": f"{stamp}.0@"}]})
            outcomes += [result["outcome"] for result in answer["results"]]
        conflicts = json.loads(self.ctl("--json", "conflicts", "--key", key))["conflicts"]
        self.check("two devices' pushes of one key make a conflict (lww)",
                   outcomes == ["applied", "resolved"] and len(conflicts) == 1 and conflicts[0]["rule"] == "lww", (outcomes, conflicts))
        revision = str(conflicts[0]["revision"])

        self.open("#/sync", "Sync")
        row = self.wait(lambda d: next((r for r in self.find_all(tid("conflict-row")) if r.get_attribute("data-revision") == revision), False),
                        "the conflict's row")
        shown = (self.find(tid("conflict-winner-value"), row).text, self.find(tid("conflict-winner-device"), row).text,
                 [e.text for e in self.find_all(tid("conflict-side-value"), row)], [e.text for e in self.find_all(tid("conflict-side-device"), row)])
        self.check("the conflict is listed: the later value won, the other is its loser, each with its device",
                   shown == ('"light"', f"on {phone}", ['"dark"'], [f"on {laptop}"]), shown)
        link = self.find('a[href^="#/key/"]', row)
        self.check("its key links to the key's page at its scope",
                   link.text == key and link.get_attribute("href").endswith(f"#/key/{key}?scope={scope}"), link.get_attribute("href"))
        self.wait(lambda d: self.find_all(tid("scope-node")), "the scope tree")
        self.screenshot("sync.png")

        # By keyboard: the button, then Tab from Cancel (where the dialog puts the focus) to Put back.
        button = self.find(tid("conflict-restore"), row)
        self.driver.execute_script("arguments[0].scrollIntoView({block: 'center'}); arguments[0].focus()", button)
        button.send_keys(Keys.ENTER)
        message = self.visible(tid("confirm-message")).text
        self.check("put back asks first, saying what it sets", 'to "dark"' in message and laptop in message, message)
        focused = self.driver.switch_to.active_element
        self.check("the dialog starts on Cancel", focused.get_attribute("data-testid") == "confirm-cancel", focused.get_attribute("outerHTML"))
        focused.send_keys(Keys.TAB)
        self.driver.switch_to.active_element.send_keys(Keys.ENTER)
        self.wait(lambda d: not self.find_all(tid("confirm-dialog")), "the dialog closed")
        said = self.wait(lambda d: (text := self.text_of(tid("status"))) and "Put back" in text and text, "the result")
        self.check("put back (by keyboard) sets the loser's value again, and says so",
                   json.loads(self.ctl("--json", "get", key, "--scope", scope))["value"] == "dark" and f"conflict {revision}" in said, said)

        self.open(f"#/sync?key=compose.nothing&scope={scope}", "Sync")
        self.check("filters that match nothing say so", self.text_of(tid("conflicts-empty")) == "No conflicts.", self.text_of(tid("conflicts-empty")))
        self.check("the filters are kept in the address and the fields",
                   "key=compose.nothing" in self.driver.current_url and self.find(tid("sync-scope")).get_attribute("value") == scope,
                   self.driver.current_url)

    def device_checks(self):
        """The sync page of a device daemon of this prefsd (--device-url), signed in with its own token."""
        device_url = self.args.device_url.rstrip("/")
        self.driver.get(f"{device_url}/ui/")
        self.sign_in_with_token(open(self.args.device_token_file).read().strip())
        self.check("the device's console signs in", self.signed_in_as("admin"), self.text_of(tid("session-info")))
        started = time.monotonic()
        while True:   # the device's first exchanges take a snapshot in; the page says so when drawn again
            self.redrawn(lambda: self.driver.get(f"{device_url}/ui/#/sync") if "#/sync" not in self.driver.current_url
                         else self.driver.refresh(), "Sync")
            state = self.find(tid("sync-state")).get_attribute("data-state")
            if state == "in-step" or time.monotonic() - started > 30:
                break
            time.sleep(0.3)
        facts = {name: self.text_of(tid(name)) for name in ("sync-upstream", "sync-device", "sync-cursor", "sync-outbox")}
        self.check("a device's sync page shows its upstream, device and scope, cursor and outbox, in step",
                   state == "in-step" and facts["sync-upstream"] == self.url and facts["sync-device"] == "console-device · writer at /accounts/alice"
                   and "of the upstream's" in facts["sync-cursor"] and facts["sync-outbox"] == "0 changes to push", (state, facts))
        self.check("and its last exchange", bool(self.text_of(tid("sync-last-exchange"))) and not self.find_all(tid("sync-error")),
                   self.text_of(tid("sync-last-exchange")))
        keys = [self.find('a[href^="#/key/"]', r).text for r in self.find_all(tid("conflict-row"))]
        self.check("the device lists the conflicts it took in", "ui.theme" in keys, keys)
        self.wait(lambda d: self.find_all(tid("scope-node")), "the scope tree")
        self.screenshot("sync-device.png")

    def draft_checks(self):
        self.open("#/drafts?account=alice", "Drafts")
        row = self.wait(lambda d: self.draft_row(self.draft), "the draft listed")
        self.wait(lambda d: self.find(tid("draft-valid"), row).text != "…", "its validity")
        self.check("drafts are listed by account, with their validity", self.find(tid("draft-valid"), row).text == "yes")
        long_row = self.draft_row(self.long_draft)
        why = self.wait(lambda d: (text := self.find(tid("draft-valid"), long_row).text) != "…" and text, "the long draft's validity")
        self.check("a draft that is not valid says why", why.startswith("no:") and "10" in why, why)
        self.find(tid("draft-link"), row).click()
        self.wait(lambda d: self.text_of(tid("page-title")) == f"Draft {self.draft[:8]}", "the draft's page")
        image = self.visible(tid("attachment-thumb"))
        width = self.wait(lambda d: d.execute_script("return arguments[0].complete && arguments[0].naturalWidth", image),
                          "the image loaded")
        self.check("an image attachment shows as a thumbnail (from a blob URL)",
                   width == 24 and image.get_attribute("src").startswith("blob:") and image.get_attribute("alt") == "A red rectangle",
                   (width, image.get_attribute("src")))
        self.check("the draft's text is shown", self.text_of(tid("draft-text")) == "Hello from the console test")
        self.screenshot("drafts.png")

    def transfer_checks(self):
        self.open("#/transfer?scope=/accounts", "Export and import")
        self.click(tid("export"))
        path = os.path.join(self.downloads, "prefsd-accounts.json")
        self.wait(lambda d: os.path.exists(path) and os.path.getsize(path) > 0, "the downloaded dump")
        with open(path) as file:
            dump = json.load(file)
        self.check("export downloads the scope's dump, as prefsctl dump has it",
                   dump == json.loads(self.ctl("dump", "--scope", "/accounts")), str(dump)[:300])

        self.ctl("set", "ui.signature", '"old"', "--scope", "/imports/old")
        self.ctl("set", "ui.signature", '"kept"', "--scope", "/imports/kept")
        file = self.write_file("import.json", json.dumps({"format": 1, "scope": "/imports", "values": [
            {"key": "ui.signature", "scope": "/imports/kept", "value": "kept"},
            {"key": "ui.signature", "scope": "/imports/new", "value": "imported"}]}))
        self.visible(tid("import-file")).send_keys(file)
        summary = self.wait(lambda d: self.text_of(tid("import-summary")), "the file's summary")
        self.check("a chosen file is summed up", "2 values" in summary, summary)
        self.click(tid("import-replace"))
        self.click(tid("import-submit"))
        items = [e.text for e in self.wait(lambda d: self.find_all(f'{tid("confirm-list")} li'), "the list of what replace removes")]
        self.check("replace's confirmation lists what would be removed", items == ['value ui.signature at /imports/old ("old")'], items)
        self.screenshot("transfer.png")
        self.confirm("1 entry it does not hold is removed")
        result = self.wait(lambda d: self.text_of(tid("import-result")), "the import's result")
        values = {(v["scope"], v["value"]) for v in json.loads(self.ctl("dump", "--scope", "/imports"))["values"]}
        self.check("import with replace makes the subtree equal to the file",
                   values == {("/imports/kept", "kept"), ("/imports/new", "imported")}, f"{result}; {values}")

    def bulk_checks(self):
        values = [{"key": f"bulk.k{i:05d}", "scope": "/bulk", "value": i} for i in range(BULK_KEYS)]
        self.ctl("load", self.write_file("bulk.json", json.dumps({"format": 1, "scope": "/bulk", "values": values})))
        started = time.monotonic()
        self.open("#/scope/bulk", "Scope /bulk")
        info = self.wait(lambda d: self.text_of(tid("pager-info")), "the pager")
        elapsed = time.monotonic() - started
        total = int(re.search(r"of (\d+)", info).group(1))
        rows = len(self.find_all(tid("key-row")))
        self.check(f"{BULK_KEYS} keys under one scope render paged ({rows} rows of {total}, in {elapsed:.2f} s)",
                   total >= BULK_KEYS and 0 < rows <= 100, info)
        self.click(tid("pager-next"))
        self.wait(lambda d: "page 2 of" in self.text_of(tid("pager-info")), "page 2")
        self.check("the next page shows the next keys", self.find_all(tid("key-row"))[0].get_attribute("data-key") != "bulk.k00000")
        self.find(tid("key-filter")).send_keys("bulk.k04242")
        self.wait(lambda d: len(self.find_all(tid("key-row"))) == 1, "one row")
        self.check("the prefix filter finds one key among them", self.row("bulk.k04242") is not None)
        self.check("the filter is in the address", "prefix=bulk.k04242" in self.driver.current_url, self.driver.current_url)

    def dark_checks(self):
        self.open("#/scope/accounts/alice", "Scope /accounts/alice")
        light = self.driver.execute_script("return getComputedStyle(document.body).backgroundColor")
        self.driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
        dark = self.driver.execute_script("return getComputedStyle(document.body).backgroundColor")
        self.screenshot("scopes-dark.png")
        self.driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "light"}]})
        self.check("light and dark follow prefers-color-scheme", light != dark, f"{light} / {dark}")

    def reader_checks(self):
        before = self.get("timeline.fontSize", "/accounts/alice")
        self.sign_out()
        self.sign_in_with_token(self.reader_token)
        self.check("a reader token signs in, read-only", self.signed_in_as("reader"), self.text_of(tid("session-info")))
        self.open("#/key/timeline.fontSize?scope=/accounts/alice", "timeline.fontSize")
        controls = [name for name in ("value-input", "save", "reset", "lock", "unlock", "reason-input") if self.find_all(tid(name))]
        self.check("a reader's key page has no editing control", not controls, controls)
        self.open("#/history/timeline.fontSize?scope=/accounts/alice", "History of timeline.fontSize")
        self.check("a reader's history has no revert", not self.find_all(tid("revert-step")))
        self.open("#/transfer", "Export and import")
        self.check("a reader can export but not import", self.find_all(tid("export")) and not self.find_all(tid("import-file")))
        status, body = self.driver.execute_async_script("""
            const done = arguments[arguments.length - 1];
            const secret = sessionStorage.getItem(arguments[0]);
            fetch('/v1/prefs/timeline.fontSize?scope=/accounts/alice', {
              method: 'PUT', body: '40',
              headers: {Authorization: 'Bearer ' + secret, 'Content-Type': 'application/json'},
            }).then((r) => r.json().then((b) => done([r.status, b]))).catch((e) => done([0, String(e)]));
        """, SECRET_KEY)
        self.check("a reader's write sent from the page is refused with 403",
                   status == 403 and body["error"]["code"] == "forbidden" and self.get("timeline.fontSize", "/accounts/alice") == before,
                   (status, body))

        self.sign_out()
        self.driver.get(self.ctl("ui", "--no-open", "--read-only"))
        self.check("a read-only sign-in link signs in as a reader", self.signed_in_as("reader"), self.text_of(tid("session-info")))
        self.open("#/key/timeline.fontSize?scope=/accounts/alice", "timeline.fontSize")
        self.check("a read-only link's session has no editing control", not self.find_all(tid("value-input")))

    def run(self):
        try:
            self.set_up()
            self.section("sign-in", self.sign_in_checks, allowed_statuses=(401,))
            self.section("scopes", self.scope_checks)
            self.section("explain", self.explain_checks)
            self.section("edit", self.edit_checks, allowed_statuses=(400,))
            self.section("live", self.live_checks)
            self.section("resume", self.resume_checks,
                         allowed_errors=(r"/v1/watch\?scope=/accounts/bob\S* - Failed to load resource: net::ERR_INTERNET_DISCONNECTED",))
            self.section("stale save", self.stale_checks, allowed_statuses=(412,))
            self.section("lock", self.lock_checks)
            self.section("history", self.history_checks)
            self.section("audit", self.audit_checks)
            self.section("sync", self.sync_checks, allowed_statuses=(404,))   # GET /v1/sync: no upstream
            self.section("drafts", self.draft_checks)
            self.section("transfer", self.transfer_checks)
            self.section("10 000 keys", self.bulk_checks)
            self.section("dark", self.dark_checks)
            self.section("reader", self.reader_checks, allowed_statuses=(403,))
            self.section("session end", self.session_end_checks, allowed_statuses=(401,))
            if self.args.device_url:
                self.section("a device's sync", self.device_checks)
        finally:
            self.driver.quit()
            shutil.rmtree(self.scratch, ignore_errors=True)
        print(f"{self.passed} passed, {len(self.failures)} failed")
        return 1 if self.failures else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True, help="prefsd's TCP listener, http://127.0.0.1:PORT")
    parser.add_argument("--socket", required=True, help="prefsd's Unix socket, for prefsctl")
    parser.add_argument("--prefsctl", required=True, help="the prefsctl binary")
    parser.add_argument("--token-file", required=True, help="prefsd --token-file's file (an admin at /)")
    parser.add_argument("--screenshots", help="save PNGs of the main pages in this folder")
    parser.add_argument("--device-url", help="the TCP listener of a device daemon of this prefsd (prefsd --upstream URL), "
                        "syncing as a writer token at /accounts/alice named console-device")
    parser.add_argument("--device-token-file", help="that device daemon's --token-file")
    sys.exit(ConsoleTest(parser.parse_args()).run())


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""OpenFeature's own Python SDK and OFREP provider (PyPI: openfeature-sdk,
openfeature-provider-ofrep) against a running prefsd: every flag type, defaults, scoped values,
a lock, an override, a list read as an object; reasons, variants and metadata; FLAG_NOT_FOUND, the SDK's type mismatch,
INVALID_CONTEXT; bulk evaluation with its ETag and 304; the configuration; and a value changed
through prefsctl, seen on the next evaluation.

The daemon must serve OFREP on TCP with --ofrep-scope /tenants/{tenant}/users/{targetingKey}
and --override flags.kill-switch=true, on an empty store. Run with the virtual environment's
Python:

    ofrep-sdk-check.py URL READER_TOKEN PREFSCTL SOCKET

Prints what it checked; exits 1 with every failed check listed.
"""

import json
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request

from openfeature import api
from openfeature.contrib.provider.ofrep import OFREPProvider
from openfeature.evaluation_context import EvaluationContext
from openfeature.exception import ErrorCode

failures = []


def check(what, condition, detail=""):
    print(("ok    " if condition else "FAIL  ") + what + ("" if condition else f": {detail}"))
    if not condition:
        failures.append(what)


def main():
    url, token, prefsctl, socket = sys.argv[1:5]

    def ctl(*arguments):
        subprocess.run([prefsctl, "--socket", socket, *arguments], check=True, capture_output=True)

    # Defaults from schemas; values at /, at a tenant, a lock at a tenant.
    schemas = {
        "flags.dark-mode": {"type": "bool", "default": False},
        "flags.banner": {"type": "string", "default": "hello"},
        "flags.limit": {"type": "int", "default": 10},
        "flags.ratio": {"type": "double", "default": 0.5},
        "flags.layout": {"type": "json", "default": {"columns": 2}},
        "flags.kill-switch": {"type": "bool", "default": False},
        "flags.regions": {"type": "array", "default": ["eu", "us"]},
    }
    with tempfile.NamedTemporaryFile("w", suffix=".json") as file:
        json.dump(schemas, file)
        file.flush()
        ctl("schema", "load", file.name)
    ctl("set", "flags.dark-mode", "true", "--scope", "/tenants/acme")
    ctl("set", "flags.banner", "welcome", "--scope", "/")
    ctl("set", "flags.limit", "50", "--scope", "/tenants/acme")
    ctl("lock", "flags.limit", "--scope", "/tenants/acme")

    api.set_provider(OFREPProvider(url, headers_factory=lambda: {"Authorization": f"Bearer {token}"}))
    client = api.get_client()
    bob = EvaluationContext("bob", {"tenant": "acme"})
    globex = EvaluationContext("carol", {"tenant": "globex"})

    def expect(label, details, value, reason, variant, error=None):
        check(f"{label}: value {value!r}", details.value == value, details)
        check(f"{label}: reason {reason}", str(details.reason) == reason, details)
        if variant is not None:
            check(f"{label}: variant {variant}", details.variant == variant, details)
        check(f"{label}: error {error}", details.error_code == error, details)

    dark = client.get_boolean_details("flags.dark-mode", False, bob)
    expect("a tenant's value", dark, True, "TARGETING_MATCH", "scope:/tenants/acme")
    metadata = dark.flag_metadata
    check("metadata: revision and source", metadata.get("source") == "scope:/tenants/acme"
          and isinstance(metadata.get("revision"), int) and metadata.get("scope") == "/tenants/acme/users/bob", metadata)
    expect("another tenant: the default", client.get_boolean_details("flags.dark-mode", True, globex),
           False, "DEFAULT", "default")
    expect("a value at /", client.get_string_details("flags.banner", "x", bob), "welcome", "STATIC", "scope:/")
    locked = client.get_integer_details("flags.limit", 0, bob)
    expect("a locked value", locked, 50, "TARGETING_MATCH", "lock:/tenants/acme")
    check("a locked value says so", locked.flag_metadata.get("locked") is True, locked.flag_metadata)
    expect("a float", client.get_float_details("flags.ratio", 0.0, bob), 0.5, "DEFAULT", "default")
    expect("an object", client.get_object_details("flags.layout", {}, bob), {"columns": 2}, "DEFAULT", "default")
    # A list has no type of its own in OpenFeature: it is read as a structure, an object flag.
    expect("a list, as an object flag", client.get_object_details("flags.regions", [], bob), ["eu", "us"], "DEFAULT", "default")
    expect("an override", client.get_boolean_details("flags.kill-switch", False, globex), True, "STATIC", "override")

    missing = client.get_boolean_details("flags.nothing", False, bob)
    expect("no value, no default", missing, False, "ERROR", None, ErrorCode.FLAG_NOT_FOUND)
    mismatch = client.get_string_details("flags.dark-mode", "fallback", bob)
    expect("the wrong type", mismatch, "fallback", "ERROR", None, ErrorCode.TYPE_MISMATCH)
    invalid = client.get_boolean_details("flags.dark-mode", False, EvaluationContext("bob smith", {"tenant": "acme"}))
    expect("a context that names no scope", invalid, False, "ERROR", None, ErrorCode.INVALID_CONTEXT)

    ctl("set", "flags.banner", "changed", "--scope", "/tenants/acme")
    expect("a value changed through prefsctl", client.get_string_details("flags.banner", "x", bob),
           "changed", "TARGETING_MATCH", "scope:/tenants/acme")

    # Bulk evaluation: an ETag, 304 while nothing it answered changed, a new tag when it does.
    def bulk(context, tag=None):
        request = urllib.request.Request(
            url.rstrip("/") + "/ofrep/v1/evaluate/flags", data=json.dumps({"context": context}).encode(), method="POST",
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json",
                     **({"If-None-Match": tag} if tag else {})})
        try:
            with urllib.request.urlopen(request, timeout=10) as answer:
                return answer.status, answer.headers.get("ETag"), json.loads(answer.read())
        except urllib.error.HTTPError as error:
            return error.code, error.headers.get("ETag"), None

    acme = {"tenant": "acme", "targetingKey": "bob"}
    status, tag, body = bulk(acme)
    flags = {flag["key"]: flag for flag in (body or {}).get("flags", [])}
    check("bulk: 200 with an ETag", status == 200 and tag, (status, tag))
    check("bulk: every flag with a value or a default", sorted(flags) == sorted(schemas), sorted(flags))
    check("bulk: values as single evaluations give them", flags.get("flags.banner", {}).get("value") == "changed", flags)
    check("bulk: 304 for the same tag", bulk(acme, tag)[:2] == (304, tag), bulk(acme, tag)[:2])
    ctl("set", "flags.banner", "elsewhere", "--scope", "/tenants/globex")
    check("bulk: 304 after a change another tenant sees", bulk(acme, tag)[0] == 304)
    ctl("set", "flags.ratio", "0.75", "--scope", "/tenants/acme/users/bob")
    status, newer, body = bulk(acme, tag)
    check("bulk: 200 and a new tag after a change it answers", status == 200 and newer != tag, (status, newer))

    with urllib.request.urlopen(urllib.request.Request(
            url.rstrip("/") + "/ofrep/v1/configuration", headers={"Authorization": f"Bearer {token}"}), timeout=10) as answer:
        configuration = json.loads(answer.read())
    polling = configuration.get("capabilities", {}).get("cacheInvalidation", {}).get("polling", {})
    check("configuration: polling, and the supported types", polling.get("enabled") is True and
          "object" in configuration["capabilities"]["flagEvaluation"]["supportedTypes"], configuration)

    if failures:
        print(f"{len(failures)} check(s) failed", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()

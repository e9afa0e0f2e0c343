"""Schemathesis hooks of the API contract test (tests/contract/schemathesis.e2e.test.ts).

Destructive admin operations only ever touch what this run created itself: a revoke or delete of
an API key, or a change or delete of an operator (a change of its URL would make the test's
operator fail its readiness probe, and its sessions then 503), whose id names an existing resource this run did not
create (the test's own admin key and operator, learnt from list responses) is sent for one this
run created instead, or for an id that cannot exist. Malformed ids pass unchanged: they cannot
name anything, and the server's answer to them is part of the contract.

An operator's `base_url` is where the API sends its readiness probe when the operator is registered
or changed, and waits for the answer up to the operator's timeout (10 s by default). A generated
http(s) URL with a host is sent for the same URL on 127.0.0.1 at a port where nothing listens
(refused at once): the suite sends nothing beyond loopback (on a machine without a route out a
public address would hang until that timeout, past schemathesis's 10 s response limit), and never
to a local port that accepts a connection and does not answer HTTP (Kafka's, Postgres's). Scheme,
path and query are kept, and strings that are not http(s) URLs pass unchanged.
"""
import random
import re
from urllib.parse import urlsplit, urlunsplit

import schemathesis

CREATED = {"key": [], "operator": []}
KEY_ID = re.compile(r"^key_[0-9a-f]{16}$")
OPERATOR_ID = re.compile(r"^opr_[0-9a-f]{16}$")
NEVER = {"key": "key_0000000000000000", "operator": "opr_0000000000000000"}
# (method, path template) -> (kind, pattern of an id that could name an existing resource)
DESTRUCTIVE = {
    ("POST", "/api/auth/keys/{id}/revoke"): ("key", KEY_ID),
    ("DELETE", "/api/auth/keys/{id}"): ("key", KEY_ID),
    ("DELETE", "/admin/operators/{id}"): ("operator", OPERATOR_ID),
    ("PATCH", "/admin/operators/{id}"): ("operator", OPERATOR_ID),
    ("POST", "/admin/operators/{id}/probe"): ("operator", OPERATOR_ID),
}


# (method, path template) of the operations whose body may carry an operator's base_url
OPERATOR_BODIES = {("POST", "/admin/operators"), ("PATCH", "/admin/operators/{id}")}
# Nothing listens on the discard port here: a probe sent there is refused at once.
REFUSED_PORT = 9


def loopback_url(value):
    """`value` on 127.0.0.1:REFUSED_PORT when it is an http(s) URL with a host, else unchanged."""
    if not isinstance(value, str):
        return value
    try:
        parts = urlsplit(value)
        host = parts.hostname
        parts.port  # raises on a port out of range: left for the server to refuse
    except ValueError:
        return value
    if parts.scheme not in ("http", "https") or not host:
        return value
    return urlunsplit((parts.scheme, f"127.0.0.1:{REFUSED_PORT}", parts.path, parts.query, parts.fragment))


@schemathesis.hook
def before_call(ctx, case, **kwargs):
    if (case.method.upper(), case.path) in OPERATOR_BODIES and isinstance(case.body, dict) and "base_url" in case.body:
        case.body["base_url"] = loopback_url(case.body["base_url"])
    target = DESTRUCTIVE.get((case.method.upper(), case.path))
    if target is None or not case.path_parameters:
        return
    kind, pattern = target
    current = str(case.path_parameters.get("id", ""))
    if pattern.match(current) and current not in CREATED[kind]:
        case.path_parameters["id"] = random.choice(CREATED[kind]) if CREATED[kind] else NEVER[kind]


@schemathesis.hook
def after_call(ctx, case, response):
    if case.method.upper() != "POST" or response.status_code != 201:
        return
    try:
        body = response.json()
    except ValueError:
        return
    if case.path == "/api/auth/keys":
        CREATED["key"].append(body["key"]["id"])
    elif case.path == "/admin/operators":
        CREATED["operator"].append(body["operator_id"])

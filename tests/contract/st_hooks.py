"""Schemathesis hooks of the API contract test (tests/contract/schemathesis.e2e.test.ts).

Destructive admin operations only ever touch what this run created itself: a revoke or delete of
an API key, or a change or delete of an operator (a change of its URL would make the test's
operator fail its readiness probe, and its sessions then 503), whose id names an existing resource this run did not
create (the test's own admin key and operator, learnt from list responses) is sent for one this
run created instead, or for an id that cannot exist. Malformed ids pass unchanged: they cannot
name anything, and the server's answer to them is part of the contract.
"""
import random
import re

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


@schemathesis.hook
def before_call(ctx, case, **kwargs):
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

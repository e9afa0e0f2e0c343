#!/usr/bin/env bash
# Tools of the test suite that are not npm packages, installed into the git-ignored .cache/ (never
# system-wide); quiet and quick when they are there:
#   - grpcurl (.cache/go/bin/grpcurl): `go install github.com/fullstorydev/grpcurl/cmd/grpcurl@v1.9.4`
#     with GOPATH, GOCACHE and GOBIN under .cache/go; tests/integration/grpc-reflection.int.test.ts
#     calls grpc.health.v1.Health/Check through server reflection with it, no .proto at hand.
#   - schemathesis (.cache/schemathesis-venv): a Python virtual environment with the pinned
#     schemathesis from PyPI; tests/contract/schemathesis.e2e.test.ts runs its `st` against /openapi.json.
# Needs `go` (1.22+) and `python3` (3.9+) with venv on PATH.
set -euo pipefail
# shellcheck source=scripts/_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/_common.sh"
cd "$ROOT"

GRPCURL_VERSION=v1.9.4
SCHEMATHESIS_VERSION=4.32.5

gobin="$ROOT/.cache/go/bin"
if [[ ! -x "$gobin/grpcurl" ]] || ! go version -m "$gobin/grpcurl" 2>/dev/null | grep -q "grpcurl[[:space:]]*$GRPCURL_VERSION"; then
  command -v go >/dev/null || die tools "go not found: install Go 1.22+ (grpcurl is built from the Go module proxy)"
  say tools "installing grpcurl $GRPCURL_VERSION into .cache/go/bin"
  GOPATH="$ROOT/.cache/go/path" GOCACHE="$ROOT/.cache/go/build" GOBIN="$gobin" GOFLAGS=-modcacherw \
    go install "github.com/fullstorydev/grpcurl/cmd/grpcurl@$GRPCURL_VERSION"
fi

venv="$ROOT/.cache/schemathesis-venv"
if [[ ! -x "$venv/bin/st" ]] || [[ "$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("schemathesis"))' 2>/dev/null)" != "$SCHEMATHESIS_VERSION" ]]; then
  command -v python3 >/dev/null || die tools "python3 not found: install Python 3.9+ with venv (schemathesis comes from PyPI)"
  say tools "installing schemathesis $SCHEMATHESIS_VERSION into .cache/schemathesis-venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$SCHEMATHESIS_VERSION"
fi

#!/usr/bin/env bash
# `npm run build`: the production build, JavaScript in dist/ (or the folder given as $1).
#
#   bash scripts/build.sh [OUT_DIR]
#
# OUT_DIR mirrors the source tree (dist/services/api/main.js, dist/lib/log/codec.js, ...), so every
# path a module resolves from import.meta.dirname (schemas, proto, migrations, public/, .data) lands
# at the same place relative to it; the run-time data files are copied next to the compiled code,
# and OUT_DIR/.data is a link to the .data beside OUT_DIR (the app root: the checkout, /app in the
# image). Run with `node dist/services/<name>/main.js` from a folder whose package.json says
# "type": "module" (the checkout, or /app in the image). Type errors stop the build: tsc checks the
# Node code, `deno check` the WebTransport edge, which tsc then emits without checking (its Deno
# globals are not in tsconfig.json; it runs as dist/services/edge-webtransport/main.js under Deno).
set -euo pipefail
# shellcheck source=scripts/_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/_common.sh"
cd "$ROOT"
BIN="$ROOT/node_modules/.bin"

out="$(realpath -m "${1:-dist}")"
# The folder is emptied first (no stale modules of deleted sources): never the checkout or above it.
if [[ "$ROOT/" == "${out%/}/"* ]]; then die build "refusing to build into $out: it contains the checkout"; fi

rm -rf "$out"
say build "type-checking and compiling to $out"
"$BIN/tsc" -p tsconfig.build.json --outDir "$out"
"$BIN/deno" check --quiet --unstable-net services/edge-webtransport/main.ts
"$BIN/tsc" -p tsconfig.build-webtransport.json --outDir "$out"

# Files read at run time relative to the compiled modules.
cp -R --parents \
  schemas/registry.json schemas/*.avsc schemas/callbacks \
  proto \
  lib/db/migrations \
  services/operator-sandbox/migrations \
  public \
  "$out/"
# The browser console, where the gateway looks from the compiled code (GATEWAY_CONSOLE_DIR's default).
node scripts/build-console.ts "$out/.build/console"
# The link never dangles: code that makes a folder under it (mkdir -p) would fail on a dangling one.
mkdir -p "$(dirname "$out")/.data"
ln -s ../.data "$out/.data"
say build "done: node $out/services/api/main.js (one entry per services/<name>/main.js)"

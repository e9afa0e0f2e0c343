#!/usr/bin/env bash
# run.sh COMMAND [ARG...]: runs COMMAND on the project's Node.js 24 (scripts/node-env.sh puts it first
# on PATH, fetching the pinned build into .cache/node/ when the node on PATH is another version).
# Every `npm run` script of package.json goes through it, so `npm run verify` and the other tools
# run on the Node the services run on, whichever node started npm. npm has already put
# node_modules/.bin on PATH; node-env.sh adds Node 24's folder before it, so the `#!/usr/bin/env node`
# of tsx, vitest, tsc and biome finds Node 24 too.
set -euo pipefail
# shellcheck source=scripts/_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/_common.sh"
(($# > 0)) || die run "usage: bash scripts/run.sh COMMAND [ARG...]"
# shellcheck source=scripts/node-env.sh
source "$ROOT/scripts/node-env.sh"
exec "$@"

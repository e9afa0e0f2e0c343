#!/usr/bin/env bash
# Runs every benchmark against the local infrastructure (started if needed) and prints the figures.
# Usage: npm run bench [-- projector|rest|latency|edge-latency|edge-fanout|catch-up|peers|auth|wallet|wallet-recovery|wallet-finish|analytics|rebuild|lifecycle]
# `peers` is not part of `all`: it builds Centrifugo with go install on its first run.
# `wallet-recovery` is not part of `all` either: its baseline waits out the retry schedule's 5 min step.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/_common.sh
source scripts/_common.sh
# Node 24 first on PATH (scripts/node-env.sh); a benchmark that compares runtimes asks for others itself.
# shellcheck source=scripts/node-env.sh
source scripts/node-env.sh
bash scripts/ensure-deps.sh
bash scripts/infra.sh up
which=${1:-all}
case $which in
  all | projector | rest | latency | edge-latency | edge-fanout | catch-up | peers | auth | wallet | wallet-recovery | wallet-finish | analytics | rebuild | lifecycle) ;;
  *)
    echo "unknown benchmark '$which' (projector|rest|latency|edge-latency|edge-fanout|catch-up|peers|auth|wallet|wallet-recovery|wallet-finish|analytics|rebuild|lifecycle|all)" >&2
    exit 2
    ;;
esac
if [[ $which == all || $which == projector ]]; then npx tsx bench/projector-replay.ts; fi
if [[ $which == all || $which == rest ]]; then npx tsx bench/rest.ts; fi
if [[ $which == all || $which == latency ]]; then npx tsx bench/main-latency.ts; fi
# `npm run bench -- edge-latency --protocols wt --wt-client chromium`: options go to bench/edge-latency.ts
# (and for edge-fanout to bench/edge-fanout.ts); WebTransport is measured with Deno's own client unless
# `--wt-client chromium`.
if [[ $which == all || $which == edge-latency ]]; then
  # Native WebTransport clients hold a UDP socket per session (bench/edge-wt-native.ts).
  ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
  npx tsx bench/edge-latency.ts "${@:2}"
fi
if [[ $which == all || $which == edge-fanout ]]; then
  # 20k sockets in one edge process need more descriptors than the usual soft limit; raise it as
  # far as the hard limit allows (the benchmark caps a level that still does not fit, and says so).
  ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
  echo "open files limit: $(ulimit -n)"
  npx tsx bench/edge-fanout.ts "${@:2}"
fi
# `npm run bench -- catch-up --rounds 100000 --catch-up 100 --live 1000`: options go to bench/stream-catch-up.ts.
if [[ $which == all || $which == catch-up ]]; then
  ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
  npx tsx bench/stream-catch-up.ts "${@:2}"
fi
# `npm run bench -- peers --servers edge,centrifugo,edge-node20,bun,ws --levels 10000`: options go to bench/peers.ts.
if [[ $which == peers ]]; then
  ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
  npx tsx bench/peers.ts "${@:2}"
fi
if [[ $which == all || $which == auth ]]; then npx tsx bench/auth.ts; fi
# `npm run bench -- analytics --rounds 200000`: the options after the name go to bench/analytics-replay.ts.
if [[ $which == all || $which == analytics ]]; then npx tsx bench/analytics-replay.ts "${@:2}"; fi
# `npm run bench -- wallet --players 10 …`: the options after the name go to bench/wallet.ts.
if [[ $which == all || $which == wallet ]]; then npx tsx bench/wallet.ts "${@:2}"; fi
# `npm run bench -- wallet-recovery --outage-s 25 --rate 10`: options go to bench/wallet-recovery.ts.
if [[ $which == wallet-recovery ]]; then npx tsx bench/wallet-recovery.ts "${@:2}"; fi
# `npm run bench -- wallet-finish --batch 256 --rounds 12`: what recording every callback attempt adds
# to the saga's batched finish, against the same batches recording nothing.
if [[ $which == all || $which == wallet-finish ]]; then npx tsx bench/wallet-finish.ts "${@:2}"; fi
# `npm run bench -- rebuild --rounds 50000 --bets 10000 --keys 5000`: options go to bench/rebuild.ts.
if [[ $which == all || $which == rebuild ]]; then npx tsx bench/rebuild.ts "${@:2}"; fi
# `npm run bench -- lifecycle --rate 100 --watchers 1000 …`: options go to bench/lifecycle.ts.
if [[ $which == all || $which == lifecycle ]]; then
  # The edge holds --watchers sockets (1000) beside its own: more than the usual soft limit of 1024.
  ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
  npx tsx bench/lifecycle.ts "${@:2}"
fi

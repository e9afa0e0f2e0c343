# One image for every service; docker-compose.yml picks the entry point with `command:`
# (`node dist/services/<name>/main.js`; the WebTransport edge: `deno run ... dist/services/edge-webtransport/main.js`).
# Three stages: `build` (full install, `npm run build` → /app/dist), `deps` (production dependencies
# only) and the final `runtime` (node_modules from `deps`, dist/ from `build`, no tsx, no TypeScript).
# tests/build.e2e.test.ts reads this file: it reproduces the `deps` install and checks that the final
# stage takes its node_modules from there only.
# The base image is an argument (`docker build --build-arg NODE_IMAGE=...`): Node 24 LTS (package.json
# engines) on Debian 13, whose glibc (2.41) loads the official uWebSockets.js binaries as they are; on a
# glibc older than 2.38 (Debian 12) the build stage's postinstall (scripts/uws-glibc.ts) would rebind
# them, but the runtime stage's install runs no scripts, so keep the base at Debian 13 or newer.
ARG NODE_IMAGE=node:24-trixie-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
# `npm install`, not `npm ci`: see scripts/ensure-deps.sh (locks written here lack other platforms' binaries).
COPY package.json package-lock.json ./
# The root package's postinstall (a no-op on this glibc) runs before the rest of the context is copied.
COPY scripts/uws-glibc.ts ./scripts/
# Our fixes to dependencies (patches/, applied by patch-package in the postinstall).
COPY patches ./patches/
RUN npm install --no-fund --no-audit
COPY . .
RUN npm run build
# Deno for the WebTransport edge: the binary of the locked npm package `deno` (a devDependency),
# found by asking it for its own path, so a binary that does not run fails the build here.
RUN install -m 0755 "$(node_modules/.bin/deno eval 'console.log(Deno.execPath())')" /usr/local/bin/deno

FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# No install scripts: among production dependencies only protobufjs (a version notice) and the
# optional ws accelerators bufferutil/utf-8-validate (ws falls back to JavaScript) have one.
# Our fixes to dependencies (patches/) are applied explicitly, as install scripts are off.
COPY patches ./patches/
RUN npm install --omit=dev --ignore-scripts --no-fund --no-audit && npx patch-package

FROM ${NODE_IMAGE} AS runtime
# openssl: scripts/dev-cert.sh makes the WebTransport edge's development certificate.
RUN apt-get update && apt-get install -y --no-install-recommends openssl && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY --from=build /usr/local/bin/deno /usr/local/bin/deno
# package.json: "type": "module" for dist/**/*.js, and Deno's npm resolution (node_modules beside it).
COPY package.json ./
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY scripts/_common.sh scripts/dev-cert.sh ./scripts/
# .data holds the round engine's generated server seed, the sandbox operator's credentials and the
# shared token secret (.data/auth, one volume for every process that signs or verifies with it)
# (volumes in compose, which take this ownership when first created); owned by the runtime user.
# dist/.data is a link to it (scripts/build.sh), so paths the code resolves from its own folder land here.
RUN mkdir -p /app/.data/round-engine /app/.data/sandbox /app/.data/auth && chown -R node:node /app/.data

USER node
ENV KAFKAJS_NO_PARTITIONER_WARNING=1
CMD ["node", "dist/services/api/main.js"]

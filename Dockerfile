# One image for every service; docker-compose.yml picks the entry point with `command:`.
# No build step: services run TypeScript with tsx, which is a devDependency, hence a full install (see scripts/ensure-deps.sh for why `npm install`, not `npm ci`).
FROM node:20-bookworm-slim

# openssl: scripts/dev-cert.sh makes the WebTransport edge's development certificate.
RUN apt-get update && apt-get install -y --no-install-recommends openssl && rm -rf /var/lib/apt/lists/*

WORKDIR /app
COPY package.json package-lock.json ./
RUN npm install --no-fund --no-audit && npm cache clean --force

COPY . .
# .data holds the round engine's generated server seed and the sandbox operator's credentials
# (volumes in compose, which take this ownership when first created); owned by the runtime user.
RUN mkdir -p /app/.data/round-engine /app/.data/sandbox && chown -R node:node /app/.data

USER node
ENV KAFKAJS_NO_PARTITIONER_WARNING=1
CMD ["node", "--import", "tsx", "services/api/main.ts"]

# One image for every app and the one-shot setup; compose picks what runs with `command:`
# (default: the app named by APP). Base image pinned by version: the Bun the tests run on.
FROM oven/bun:1.4.5-debian AS deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY apps/ingest/package.json apps/ingest/
COPY apps/platform/package.json apps/platform/
COPY apps/processor/package.json apps/processor/
COPY apps/dispatcher/package.json apps/dispatcher/
COPY shared/package.json shared/
# Production dependencies only (no test tools, no embedded Postgres), no install scripts; then the
# fixes to dependencies the root postinstall makes (scripts/patch-deps.mjs: postgres.js, nats.js),
# which --ignore-scripts skips.
COPY scripts/patch-deps.mjs scripts/
RUN bun install --production --ignore-scripts && bun scripts/patch-deps.mjs

FROM oven/bun:1.4.5-debian
WORKDIR /app
ARG APP=ingest
ENV APP=${APP} NODE_ENV=production
COPY --from=deps /app/node_modules ./node_modules
COPY package.json tsconfig.json bunfig.toml ./
COPY shared ./shared
COPY apps ./apps
# The platform serves the dashboard from its source (apps/platform/src/dashboard).
COPY web ./web
COPY scripts/migrate.ts scripts/admin.ts ./scripts/
# Runs as the image's unprivileged `bun` user; nothing in /app is writable by it.
USER bun
# 4317: the ingest host's OTLP/gRPC listener (INGEST_GRPC_PORT, docs/otlp.md).
EXPOSE 3100 3200 3300 3400 4317
CMD ["sh", "-c", "exec bun run apps/${APP}/src/main.ts"]

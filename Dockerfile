# One image for every app; APP picks which main.ts runs (ingest, platform, processor, dispatcher).
FROM oven/bun:1.4-debian AS deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY apps/ingest/package.json apps/ingest/
COPY apps/platform/package.json apps/platform/
COPY apps/processor/package.json apps/processor/
COPY apps/dispatcher/package.json apps/dispatcher/
COPY shared/package.json shared/
RUN bun install --production --ignore-scripts

FROM oven/bun:1.4-debian
WORKDIR /app
ARG APP
ENV APP=${APP} NODE_ENV=production
COPY --from=deps /app/node_modules ./node_modules
COPY . .
USER bun
CMD ["sh", "-c", "exec bun run apps/${APP}/src/main.ts"]

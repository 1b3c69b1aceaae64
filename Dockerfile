# syntax=docker/dockerfile:1
# wowza-exporter image: `docker build -t wowza-exporter .`
# Optional build arguments fill the OCI labels and wowza_exporter_build_info{revision}:
#   docker build --build-arg VERSION=0.1.0 --build-arg REVISION=$(git rev-parse HEAD) --build-arg CREATED=$(date -u +%FT%TZ) .

# The Node.js major the test suite runs on (.ci/run tests Debian's Node 20): V8 flags are set by name (src/base/v8-flags.ts),
# and another V8 may ignore one quietly. test/unit/deploy.test.ts fails when the two differ.
ARG NODE_IMAGE=node:20-bookworm-slim

# 1. Compile TypeScript with the full (dev) dependency set.
FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
# The workspace package (the simulator, which the CLI bundle carries) must be there for npm ci to link it.
COPY packages/simulator/package.json ./packages/simulator/
# --ignore-scripts: no dependency needs an install script; the build runs below, once the sources are here.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY packages ./packages
COPY src ./src
COPY scripts ./scripts
RUN npm run build

# 2. Production dependencies only.
FROM ${NODE_IMAGE} AS deps
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force

# 3. Runtime: Node.js, the compiled code, production dependencies; no npm cache, no sources, no compiler.
FROM ${NODE_IMAGE}
ARG VERSION=dev
ARG REVISION=unknown
ARG CREATED
LABEL org.opencontainers.image.title="wowza-exporter" \
      org.opencontainers.image.description="Prometheus exporter and log shipper for the Wowza Streaming Engine REST API and Wowza Video" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}"
ENV NODE_ENV=production \
    WOWZA_EXPORTER_REVISION=${REVISION}
# Two malloc arenas instead of up to eight per core: less RSS at the same latency (bench/RESULTS.md). V8's
# heap settings need no environment: `serve` makes them at start (src/base/v8-flags.ts).
ENV MALLOC_ARENA_MAX=2
WORKDIR /app
COPY --from=deps /src/node_modules ./node_modules
COPY --from=build /src/dist ./dist
COPY package.json ./
# Writable state for the non-root user (mount a volume here). It is also the working directory, so the
# log shipper's relative default files (positions, dead letters) land in it, not in the read-only /app. Its mode is
# explicit (not the build's umask): the positions and dead letters (log lines) are for the exporter's user only.
RUN install -d -m 0750 -o 1000 -g 1000 /var/lib/wowza-exporter
WORKDIR /var/lib/wowza-exporter
# The `node` user of the base image, by number so that Kubernetes' runAsNonRoot can verify it.
USER 1000:1000
EXPOSE 9935
# No curl in the slim image: Node's fetch asks /-/healthy (on the default listen address).
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:9935/-/healthy').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["node", "/app/dist/cli.js"]
CMD ["serve"]

# syntax=docker/dockerfile:1
# shortcut-webhook image: a bundled, tsx-free runtime on distroless Node.js 24 (LTS), running as a numeric non-root
# user. .ci/run runs the test suite on this major too (read from RUNTIME_IMAGE below).
#
#   docker build -t shortcut-webhook:0.2.0 --build-arg SOURCE_COMMIT=$(git rev-parse HEAD) .
#
# (podman build and buildah bud take the same arguments; docs/deploy.md shows the push, .ci/image the build CI runs.)
#
# Stages: `build` bundles src/ with esbuild (build/bundle.js; three packages of the Kubernetes client stay external), `deps` installs
# production dependencies only, and the final stage copies the two onto a base image with no shell and no package
# manager.

# Build and runtime stages on the same Node major and Debian release (13, trixie).
ARG NODE_IMAGE=node:24-trixie-slim
ARG RUNTIME_IMAGE=gcr.io/distroless/nodejs24-debian13:nonroot
# The package's version (package.json; test/cli/build-info.test.ts keeps the two, the chart's appVersion and the
# manifests' image tag equal). SOURCE_COMMIT: the git commit, for `shortcut-webhook version` and build_info, since
# the build context has no .git (docker build --build-arg SOURCE_COMMIT=$(git rev-parse HEAD) ...).
ARG VERSION=0.2.0
ARG SOURCE_COMMIT=""

# The bundle is the same on every platform, so it is built natively when cross-building.
FROM --platform=$BUILDPLATFORM ${NODE_IMAGE} AS build
WORKDIR /src
# .npmrc: legacy-peer-deps, which the lockfile was written with (without it `npm ci` finds the lockfile out of sync).
COPY package.json package-lock.json .npmrc ./
# No scripts: `prepare` would bundle before the sources are here (the step below does it, with the same config).
# The optional secret `ca-certificates` (`--secret id=ca-certificates,src=/etc/ssl/certs/ca-certificates.crt`) is a
# CA bundle npm trusts besides Node's own, for a registry behind a TLS-inspecting proxy; a secret mount is in no layer.
# npm's download cache is a cache mount: kept by the builder between builds, in no layer.
RUN --mount=type=secret,id=ca-certificates --mount=type=cache,target=/root/.npm,sharing=locked \
    if [ -s /run/secrets/ca-certificates ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/ca-certificates; fi \
  && npm ci --ignore-scripts --no-audit --no-fund
# esbuild reads tsconfig.json too (class field semantics follow its target), so the bundle behaves as under tsx.
COPY tsconfig.json ./
COPY build ./build
COPY src ./src
# build/bundle.js is the checkout's `prepare` step too: one ES module per command (main.ts's dynamic imports split
# them), packages bundled but node-fetch, ws and debug, source maps. No tsx at run time (tsx would also want to write a
# cache under /tmp, and the root filesystem is read-only).
ARG SOURCE_COMMIT
RUN SOURCE_COMMIT="${SOURCE_COMMIT}" node build/bundle.js --outdir dist

FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
RUN --mount=type=secret,id=ca-certificates --mount=type=cache,target=/root/.npm,sharing=locked \
    if [ -s /run/secrets/ca-certificates ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/ca-certificates; fi \
  && npm ci --omit=dev --ignore-scripts --no-audit --no-fund
# The bundle holds every package but the ones build/bundle.js keeps external (node-fetch, ws, debug): only those and
# their dependencies stay (the Kubernetes client, tsx, esbuild, fastify, pino, prom-client, yaml and node_modules/.bin go).
COPY build/runtime-modules.js ./build/
COPY --from=build /src/dist/modules.json ./dist/
RUN node build/runtime-modules.js --modules dist/modules.json --node-modules node_modules

FROM ${RUNTIME_IMAGE}
ARG VERSION
ARG SOURCE_COMMIT
LABEL org.opencontainers.image.title="shortcut-webhook" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${SOURCE_COMMIT}" \
      org.opencontainers.image.description="Mutating admission webhook that routes Liqo reflected EndpointSlices through leaf-to-leaf shortcuts" \
      org.opencontainers.image.licenses="Apache-2.0"
WORKDIR /app
# distroless keeps node in /nodejs/bin; on PATH, `node` works for the entrypoint and the Deployment's preStop hook
# alike, and on a node:24 base too.
ENV NODE_ENV=production \
    PATH=/nodejs/bin:/usr/local/bin:/usr/bin:/bin
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /src/dist ./dist
COPY package.json ./
USER 65532:65532
EXPOSE 9443 8080
# Garbage collection tuned for a latency-bound process in a pod of at most one core (the manifests' CPU limit):
# - --single-threaded-gc: no GC helper threads. Under a quota of one core or less they only compete with the main thread;
#   with the load generator on the other core, the bench's CPU per review fell 8 % and p99 by 0.3 ms or more.
# - --max-semi-space-size=4 (MiB): a review's garbage dies young, and a scavenge's pause grows with the young
#   generation: about 0.9 ms every 30 ms at V8's default (up to 16 MiB) under load, about 0.5 ms every 8 ms at 4 MiB,
#   which took another 0.3 to 0.6 ms off p99 for the same CPU.
ENTRYPOINT ["node", "--enable-source-maps", "--single-threaded-gc", "--max-semi-space-size=4", "dist/shortcut-webhook.mjs"]
CMD ["serve"]

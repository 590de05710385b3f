# The echoperator image: the esbuild bundle (one file, no node_modules) on distroless Node 24,
# chosen by measurement (docs/benchmarks.md, "Runtimes"): 17-19% less CPU than Node 22 for the same
# work at 3-6% more RSS; Node 26 saved more CPU on a backlog but took 14% more RSS after it.
#   docker build -t ghcr.io/mmontes11/echoperator-ts:$(node -p 'require("./package.json").version') .
# The cdk8s Deployment (infra/echoperator.ts) runs it as `node /app/start.js`, user 65532.

# Build: the exact dependency tree, then `npm run build` (scripts/ship/build.ts). Install scripts are
# skipped: esbuild and deno find their platform binaries without them.
FROM node:24-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json .npmrc ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
COPY scripts/ship/build.ts scripts/ship/bundle-clientnode.ts ./scripts/ship/
ARG ECHOPERATOR_VERSION=
RUN ECHOPERATOR_VERSION="${ECHOPERATOR_VERSION}" npm run build
# V8's code cache of the whole bundle, made by the entrypoint (src/cachedstart.ts) with
# --predictable, so the same bundle on the same Node gives the same bytes (scripts/ship/image/
# compile-cache.ts). This stage's Node is only the final stage's if both tags name one release: V8
# refuses a cache of another Node version and the bundle is compiled as usual.
RUN mkdir -p /app/compile-cache && cp dist/bundle/echoperator.js dist/bundle/start.js /app/ && \
    ECHOPERATOR_WRITE_CODE_CACHE=/app/compile-cache/echoperator.js.v8 node --predictable /app/start.js

# Run: no shell, no package manager, only the bundle, its entrypoint and its code cache. A .js file
# with no package.json beside it is CommonJS, as both are. Distroless keeps node in /nodejs/bin,
# which is not on its PATH: put it there so the Deployment's `node /app/start.js` resolves.
# `node /app/echoperator.js` runs the same operator, compiling it at start.
FROM gcr.io/distroless/nodejs24-debian12:nonroot
ENV PATH=/nodejs/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
COPY --from=build /src/dist/bundle/echoperator.js /app/echoperator.js
COPY --from=build /src/dist/bundle/start.js /app/start.js
COPY --from=build /app/compile-cache /app/compile-cache
USER 65532:65532
EXPOSE 2112 8081
ENTRYPOINT ["node", "/app/start.js"]

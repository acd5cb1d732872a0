# syntax=docker/dockerfile:1
#
# One image, two processes: the connector (default command) and the API as a Node server
# (`node dist/functions/server.mjs`, used by infra/docker-compose.yml; on AWS the API is Lambda).
#
# Platform: the image is built for the platform docker is asked for (`--platform`; the CDK app asks
# for linux/arm64 by default, or linux/amd64 with `-c connectorArchitecture=x86_64`). `npm ci`
# installs, from the lockfile, the sharp and @ffmpeg-installer binaries of THAT platform, so build
# natively or with buildx + QEMU; never copy node_modules from the host.

ARG NODE_IMAGE=node:22-bookworm-slim

# --- build: compile our TypeScript into two ESM entries; npm packages stay external --------------
# --splitting keeps each dynamic import() a chunk of its own: the session code (and with it
# Baileys) and the inbound mapper load with the first account, not at start (an empty connector
# then holds ~100 MB of RSS instead of ~140 MB).
FROM ${NODE_IMAGE} AS build
WORKDIR /build
COPY package.json package-lock.json ./
# No install scripts: the `node` devDependency would fetch a second Node, and every native
# package used here ships prebuilt per-platform binaries as optional dependencies.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json ./
COPY core ./core
COPY connector ./connector
COPY functions ./functions
COPY client ./client
COPY dashboard ./dashboard
COPY infra/build-dashboard.ts ./infra/
RUN node node_modules/esbuild/bin/esbuild connector/main.ts functions/server.ts \
      --bundle --splitting --platform=node --target=node22 --format=esm --packages=external \
      --sourcemap --outbase=. --outdir=dist --out-extension:.js=.mjs
# The console (/dashboard), prebuilt beside the server that serves it (functions/system/dashboard.ts).
RUN node --import tsx infra/build-dashboard.ts dist/functions/dashboard

# --- deps: production dependencies only, exactly as locked ---------------------------------------
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force

# --- runtime -------------------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app
# Owned by root and not writable by the process; temporary media files go to /tmp.
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /build/dist ./dist
COPY package.json ./
# The only writable place (media conversion temp files): on Fargate a bind mount at /tmp with a
# read-only root; declaring it here makes ECS give that mount this directory's mode (1777), not
# root-only 0755.
VOLUME ["/tmp"]
USER node
# Baileys keeps an AsyncLocalStorage per socket; on Node 22 this flag keeps their cost O(1) per promise.
CMD ["node", "--enable-source-maps", "--experimental-async-context-frame", "--expose-gc", "dist/connector/main.mjs"]

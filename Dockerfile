# The gateway image: build the TypeScript once (swc, as `npm run build` does: seconds, and the console with Vite; types are
# checked by `npm run typecheck` in CI, not here), run the compiled server on Node 24.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm install --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
COPY migrations ./migrations
COPY schema ./schema
# The console (React, built by Vite into dist/console; its typed operations are generated and committed).
COPY console ./console
RUN npm run build && npm prune --omit=dev

FROM node:24-bookworm-slim
# HOST=0.0.0.0: the server's default is loopback only, which nothing outside the container could reach.
ENV NODE_ENV=production HOST=0.0.0.0 PORT=4000 DATA_DIR=/data
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# The guides the server renders at /docs/guides, from the same Markdown as the repository's.
COPY README.md CONTRIBUTING.md ./
COPY docs ./docs
RUN mkdir -p /data && chown node:node /data
USER node
EXPOSE 4000
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s \
  CMD node -e "fetch('http://127.0.0.1:4000/readyz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"
# V8's young generation at most 2 × 32 MB (by default it grows to 2 × 64 MB under load and stays there):
# 40–65 MB less RSS under the bench's load, for CPU per request within the runs' noise (docs/performance.md).
CMD ["node", "--max-semi-space-size=32", "--heap-growing-percent=200", "dist/src/main.js"]

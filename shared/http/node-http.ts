/**
 * node:http as CommonJS code has it, for the servers' own use of its values (types come from `import type`). An ES
 * import of a built-in module reads every one of its exports, and node:http's `WebSocket`, `CloseEvent` and
 * `MessageEvent` are getters that load Node's bundled undici: on Node 24, 2.3 MB more heap (measured alone: 2.79 MB
 * against 0.47) in every keygate process that does not load undici otherwise (the control plane, a verifier without
 * the reverse proxy), where Fastify's `require('http')` loads none of it — and a verifier's major collections grow
 * with its heap (bench/RESULTS.md, 2026-11-26).
 */
export const nodeHttp = process.getBuiltinModule('node:http')

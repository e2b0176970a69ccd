/**
 * node:http as CommonJS code has it, for the servers' own use of its values (types come from `import type`). An ES
 * import of a built-in module reads every one of its exports, and node:http's `WebSocket`, `CloseEvent` and
 * `MessageEvent` are getters that load Node's bundled undici: on Node 24, megabytes more heap in every keygate process
 * that does not load undici otherwise (the control plane, a verifier without the reverse proxy), where Fastify's
 * `require('http')` loads none of it — and a verifier's major collections grow with its heap.
 */
export const nodeHttp = process.getBuiltinModule('node:http')

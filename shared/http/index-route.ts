import { Type } from 'typebox'
import { packageVersion } from '../package-root.js'
import type { KeygateServer } from './keygate-server.js'

/** What a server says it is at `GET /`: its role and where to go from there. */
export interface ServerIndex {
  service: 'keygate dev' | 'keygate control plane' | 'keygate verifier'
  /** In a sentence, what this server answers. */
  about: string
  /** Named paths: the console, the API reference, the operations it serves, the probes. */
  links: Record<string, string>
  /**
   * Where a browser is sent instead of the JSON (the admin console), if anywhere: a relative path, so that it stays
   * under the prefix a proxy may serve Keygate at.
   */
  browserHome?: string
}

const Index = Type.Object({
  service: Type.String({ description: 'Which Keygate process answered' }),
  version: Type.String({ description: "Keygate's version" }),
  about: Type.String({ description: 'What this server answers' }),
  links: Type.Record(Type.String(), Type.String(), { description: 'Where to go from here' }),
})

/**
 * `GET /`: a short JSON saying which Keygate process this is and where its console, API reference and operations
 * are, so that a first request to the bare address is answered rather than refused. A browser asking for a page is
 * sent to the console where the server has one.
 */
export function registerIndex(app: KeygateServer, index: ServerIndex): void {
  const body = { service: index.service, version: packageVersion(), about: index.about, links: index.links }
  app.get('/', { schema: { response: { 200: Index } } }, async (request, reply) => {
    const accept = request.headers.accept ?? ''
    if (index.browserHome && /\btext\/html\b/.test(accept)) return reply.redirect(index.browserHome, 302)
    return body
  })
}

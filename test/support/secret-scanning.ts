import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

/** A signing key as a report's sender holds it. */
export interface ReportSigner {
  identifier: string
  privateKey: KeyObject
  publicPem: string
}

export function newReportSigner(identifier: string): ReportSigner {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
  return { identifier, privateKey, publicPem: publicKey.export({ type: 'spki', format: 'pem' }).toString() }
}

/** The headers GitHub sends with a report: `body` signed by `signer` (ECDSA P-256, SHA-256, DER, base64). */
export function signedHeaders(signer: ReportSigner, body: string): Record<string, string> {
  return {
    'content-type': 'application/json',
    'github-public-key-identifier': signer.identifier,
    'github-public-key-signature': sign('sha256', Buffer.from(body), signer.privateKey).toString('base64'),
  }
}

/**
 * A local stand-in for GitHub's key endpoint: serves `{public_keys: [...]}` for the signers it is given (and an RSA key
 * a verifier must skip), counts the requests, and can be made to fail.
 */
export interface KeySetServer {
  url: string
  /** The published signers (replaceable: a rotation). */
  signers: ReportSigner[]
  /** Requests so far. */
  hits(): number
  /** The status it answers (200: the key set). */
  status: number
  close(): Promise<void>
}

export async function startKeySetServer(signers: ReportSigner[]): Promise<KeySetServer> {
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ type: 'spki', format: 'pem' })
  let hits = 0
  const state: KeySetServer = {
    url: '',
    signers,
    hits: () => hits,
    status: 200,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  }
  const server: Server = createServer((_request, response) => {
    hits++
    if (state.status !== 200) {
      response.writeHead(state.status).end()
      return
    }
    const public_keys = [
      { key_identifier: 'rsa-not-used', key: rsa.toString(), is_current: false },
      ...state.signers.map((signer, i) => ({
        key_identifier: signer.identifier,
        key: signer.publicPem,
        is_current: i === 0,
      })),
    ]
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ public_keys }))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/meta/public_keys/secret_scanning`
  return state
}

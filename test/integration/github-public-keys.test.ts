import { generateKeyPairSync } from 'node:crypto'
import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { PublishedSigningKeys } from '../../control-plane/leaks/github-public-keys.js'
import { capturedLogger, ManualClock } from '../support/apps.js'
import { newReportSigner, startKeySetServer, type KeySetServer } from '../support/secret-scanning.js'

const MINUTE = 60_000
const DAY = 86_400_000

interface Endpoint {
  url: string
  hits(): number
  close(): void
}

/** A key endpoint that answers as `answer` says (a misbehaving publisher). */
async function endpoint(answer: (response: ServerResponse) => void): Promise<Endpoint> {
  let hits = 0
  const server = createServer((_request, response) => {
    hits++
    answer(response)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/keys`,
    hits: () => hits,
    close: () => {
      server.closeAllConnections()
      server.close()
    },
  }
}

/**
 * The signing keys of leak reports as a control plane holds them, fetched from local stand-ins for GitHub's key
 * endpoint on a clock the tests move.
 */
describe('the published signing keys', () => {
  const opened: { close(): unknown }[] = []
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((server) => server.close()))
  })
  const keySetOf = async (...identifiers: string[]) => {
    const server = await startKeySetServer(identifiers.map((id) => newReportSigner(id)))
    opened.push(server)
    return server
  }
  const keysAt = (keySet: KeySetServer | Endpoint, clock = new ManualClock(), timeoutMs?: number) => {
    const { log, lines } = capturedLogger()
    return { keys: new PublishedSigningKeys({ url: keySet.url, clock, log, timeoutMs }), clock, lines }
  }

  it('fetches once for identifiers asked together, each answered from that fetch', async () => {
    const keySet = await keySetOf('current')
    const { keys } = keysAt(keySet)
    const found = await Promise.all(['current', 'current', 'unknown', 'current'].map((id) => keys.keyFor(id)))
    expect(found.map((key) => key !== null)).toEqual([true, true, false, true])
    expect(keySet.hits()).toBe(1)
  })

  it('asks again for an identifier it does not hold at most once a minute: a new key is found then', async () => {
    const keySet = await keySetOf('old')
    const { keys, clock } = keysAt(keySet)
    expect(await keys.keyFor('old')).not.toBeNull()
    keySet.signers.push(newReportSigner('new'))
    clock.advance(MINUTE - 1)
    expect(await keys.keyFor('new')).toBeNull()
    expect(keySet.hits()).toBe(1)
    clock.advance(1)
    expect(await keys.keyFor('new')).not.toBeNull()
    expect(keySet.hits()).toBe(2)
  })

  it('drops a key withdrawn from the set once the keys it holds are a day old', async () => {
    const keySet = await keySetOf('withdrawn', 'kept')
    const { keys, clock } = keysAt(keySet)
    expect(await keys.keyFor('withdrawn')).not.toBeNull()
    keySet.signers.splice(0, 1)
    clock.advance(DAY)
    expect(await keys.keyFor('withdrawn')).not.toBeNull()
    expect(keySet.hits()).toBe(1)
    clock.advance(1)
    expect(await keys.keyFor('withdrawn')).toBeNull()
    expect(await keys.keyFor('kept')).not.toBeNull()
    expect(keySet.hits()).toBe(2)
  })

  it('keeps the keys it holds when their refresh fails, and says so', async () => {
    const keySet = await keySetOf('held')
    const { keys, clock, lines } = keysAt(keySet)
    expect(await keys.keyFor('held')).not.toBeNull()
    keySet.status = 503
    clock.advance(DAY + 1)
    expect(await keys.keyFor('held')).not.toBeNull()
    expect(keySet.hits()).toBe(2)
    expect(lines.join('')).toContain('secret-scanning keys could not be refreshed')
  })

  it('throws while the keys cannot be fetched, until it may ask again, rather than answer no such key', async () => {
    const keySet = await keySetOf('current')
    keySet.status = 500
    const { keys, clock } = keysAt(keySet)
    await expect(keys.keyFor('current')).rejects.toThrow(/answered 500/)
    keySet.status = 200
    // Not asked again yet: the key may well be GitHub's, so this is no answer either.
    await expect(keys.keyFor('current')).rejects.toThrow(/could not be fetched/)
    expect(keySet.hits()).toBe(1)
    clock.advance(MINUTE)
    expect(await keys.keyFor('current')).not.toBeNull()
    expect(keySet.hits()).toBe(2)
    // Fetched since: an identifier it does not hold is no key.
    expect(await keys.keyFor('unknown')).toBeNull()
  })

  it('keeps only P-256 keys of the set', async () => {
    const pem = (key: ReturnType<typeof generateKeyPairSync>['publicKey']) =>
      key.export({ type: 'spki', format: 'pem' }).toString()
    const p256 = newReportSigner('p256')
    const entries = [
      { key_identifier: 'p384', key: pem(generateKeyPairSync('ec', { namedCurve: 'secp384r1' }).publicKey) },
      { key_identifier: 'ed25519', key: pem(generateKeyPairSync('ed25519').publicKey) },
      { key_identifier: 'not-a-key', key: '-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n' },
      { key_identifier: 7, key: p256.publicPem },
      null,
      { key_identifier: 'p256', key: p256.publicPem },
    ]
    const published = await endpoint((response) => response.end(JSON.stringify({ public_keys: entries })))
    opened.push(published)
    const { keys } = keysAt(published)
    for (const id of ['p384', 'ed25519', 'not-a-key', '7']) expect(await keys.keyFor(id), id).toBeNull()
    expect(await keys.keyFor('p256')).not.toBeNull()
    // The key set server's RSA key, too.
    const keySet = await keySetOf('signer')
    expect(await keysAt(keySet).keys.keyFor('rsa-not-used')).toBeNull()
  })

  it('refuses what is not a key set: a redirect, a huge body, not JSON, no list, a slow answer', async () => {
    const target = await keySetOf('elsewhere')
    const cases: [string, (response: ServerResponse) => void, RegExp][] = [
      ['redirect', (response) => response.writeHead(302, { location: target.url }).end(), /answered 302/],
      ['not JSON', (response) => response.end('<html>'), /JSON/],
      ['no list', (response) => response.end('{"public_keys": null}'), /no public_keys list/],
      [
        'huge',
        (response) => {
          const chunk = Buffer.alloc(64 * 1024, 32)
          const write = () => {
            while (response.writable && response.write(chunk));
          }
          response.on('drain', write)
          write()
        },
        /larger than/,
      ],
      ['slow headers', () => {}, /timeout/i],
      ['slow body', (response) => response.writeHead(200).write('{"public_keys": ['), /timeout/i],
    ]
    for (const [name, answer, thrown] of cases) {
      const published = await endpoint(answer)
      opened.push(published)
      await expect(keysAt(published, new ManualClock(), 300).keys.keyFor('elsewhere'), name).rejects.toThrow(thrown)
    }
    expect(target.hits()).toBe(0)
  })
})

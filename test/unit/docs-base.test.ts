import type { Socket } from 'node:net'
import { describe, expect, it } from 'vitest'
import { docsBaseFor, docsBaseForSocket } from '../../shared/http/docs-base.js'

const socket = (localAddress: string, localPort: number) => ({ localAddress, localPort }) as Socket
const request = (host: string | undefined, at = socket('10.0.0.5', 7071)) => ({ headers: { host }, socket: at })

describe("the base of an error's docs link", () => {
  it('is the host the client named, with its port', () => {
    expect(docsBaseFor('/docs', request('keygate.internal:9000'))).toBe('http://keygate.internal:9000/docs')
    expect(docsBaseFor('/docs', request('[::1]:7070'))).toBe('http://[::1]:7070/docs')
    expect(docsBaseFor('/keygate/docs', request('127.0.0.1'))).toBe('http://127.0.0.1/keygate/docs')
  })

  it("is the socket's address when the Host header is missing or not a host (nothing of it is echoed)", () => {
    for (const host of [undefined, '', 'evil.example/<script>', 'a b', 'x:99999999', 'h"ost'])
      expect(docsBaseFor('/docs', request(host)), String(host)).toBe('http://10.0.0.5:7071/docs')
    expect(docsBaseFor('/docs', request(undefined, socket('::1', 7070)))).toBe('http://[::1]:7070/docs')
    expect(docsBaseForSocket('/docs', socket('::ffff:127.0.0.1', 7072))).toBe('http://[::ffff:127.0.0.1]:7072/docs')
  })

  it('is the configured URL as it is, whatever the request', () => {
    expect(docsBaseFor('https://keygate.example.com/docs', request('other:1'))).toBe('https://keygate.example.com/docs')
    expect(docsBaseForSocket('https://keygate.example.com/docs', socket('::1', 1))).toBe(
      'https://keygate.example.com/docs',
    )
  })
})

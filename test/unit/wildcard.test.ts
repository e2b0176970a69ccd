import { describe, expect, it } from 'vitest'
import { overrideFor, wildcardMatches, type NamespaceRecord } from '../../shared/ratelimits/ratelimit-namespace.js'

describe('wildcard overrides', () => {
  it('match as Unkey’s patterns do: `*` is any run of characters, none included', () => {
    expect(wildcardMatches('not-exist-*', 'resource-1')).toBe(false)
    expect(wildcardMatches('*', 'resource-1')).toBe(true)
    expect(wildcardMatches('*', '')).toBe(true)
    expect(wildcardMatches('other-*', 'other-1')).toBe(true)
    expect(wildcardMatches('other-*', 'other-')).toBe(true)
    expect(wildcardMatches('other-*', 'resource-1')).toBe(false)
    expect(wildcardMatches('*@example.com', 'ana@example.com')).toBe(true)
    expect(wildcardMatches('*@example.com', 'ana@example.com.evil')).toBe(false)
    expect(wildcardMatches('a*b*c', 'a--b--c')).toBe(true)
    expect(wildcardMatches('a*b*c', 'a--c--b')).toBe(false)
    expect(wildcardMatches('a**b', 'ab')).toBe(true)
    expect(wildcardMatches('resource-2', 'resource-2')).toBe(true)
    expect(wildcardMatches('resource-2', 'resource-3')).toBe(false)
  })

  it('treat every other character as itself (no regular expression from client input)', () => {
    expect(wildcardMatches('a.b*', 'axb1')).toBe(false)
    expect(wildcardMatches('a.b*', 'a.b1')).toBe(true)
    expect(wildcardMatches('(x+)+*', '(x+)+y')).toBe(true)
    expect(wildcardMatches('[a]*', 'a1')).toBe(false)
  })

  it('do not let a prefix and a suffix overlap in the identifier', () => {
    expect(wildcardMatches('ab*ba', 'aba')).toBe(false)
    expect(wildcardMatches('ab*ba', 'abba')).toBe(true)
    expect(wildcardMatches('a*b*a', 'aba')).toBe(true)
    expect(wildcardMatches('ab*b*ba', 'abba')).toBe(false)
  })

  it('pick the identifier’s own override, then the first matching pattern, else none', () => {
    const rule = (identifier: string, limit: number) => ({
      id: `rlor_${limit}`,
      identifier,
      limit,
      duration: 1_000,
      async: false,
    })
    const namespace: NamespaceRecord = {
      id: 'rlns_1',
      name: 'n',
      createdAt: 0,
      wildcards: [rule('user_*', 30), rule('*', 40)],
    }
    const exact = { ...rule('user_1', 20), namespaceId: 'rlns_1', createdAt: 0 }
    expect(overrideFor('user_1', exact, namespace)?.limit).toBe(20)
    expect(overrideFor('user_2', null, namespace)?.limit).toBe(30)
    expect(overrideFor('admin', null, namespace)?.limit).toBe(40)
    expect(overrideFor('admin', null, { ...namespace, wildcards: [] })).toBeUndefined()
    expect(overrideFor('admin', null, null)).toBeUndefined()
  })
})

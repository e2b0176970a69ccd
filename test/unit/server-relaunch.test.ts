import { describe, expect, it } from 'vitest'
import { missingServerFlags, serverRelaunch, type NodeProcess } from '../../cli/server-relaunch.js'

const node24: NodeProcess = {
  version: '24.21.0',
  execArgv: ['--cpu-prof'],
  argv: ['/usr/bin/node', '/app/dist/cli/keygate.js', 'verifier', '--any-api'],
  nodeOptions: undefined,
  canExecve: true,
  hasIpcChannel: false,
  heapSizeLimit: 4288 * 2 ** 20,
}
const BOTH = ['--no-async-context-frame', '--max-semi-space-size=8']

describe('relaunching a server with the node flags it runs with', () => {
  it('relaunches the servers on Node 24 with both flags after the node flags they were given, then the script and its arguments', () => {
    for (const command of ['verifier', 'control-plane', 'dev'] as const) {
      expect(serverRelaunch(command, node24)).toEqual({
        added: BOTH,
        args: ['--cpu-prof', ...BOTH, '/app/dist/cli/keygate.js', 'verifier', '--any-api'],
      })
    }
    expect(serverRelaunch('verifier', { ...node24, version: '26.0.0' })?.added).toEqual(BOTH)
  })

  it('adds only the semi-space cap on a Node before 24 that can execve (its frame is off already)', () => {
    expect(serverRelaunch('verifier', { ...node24, version: '22.15.0' })?.added).toEqual(['--max-semi-space-size=8'])
    expect(missingServerFlags('verifier', { ...node24, version: '20.19.5' })).toEqual(['--max-semi-space-size=8'])
  })

  it('leaves the one-shot commands and a Node that cannot execve as they are', () => {
    expect(serverRelaunch('root-key create', node24)).toBeUndefined()
    expect(missingServerFlags('root-key create', node24)).toEqual([])
    expect(serverRelaunch('verifier', { ...node24, canExecve: false })).toBeUndefined()
  })

  it('leaves a process with an IPC channel (PM2, node --watch: execve would drop it) or an inspector flag as it is', () => {
    expect(serverRelaunch('verifier', { ...node24, hasIpcChannel: true })).toBeUndefined()
    for (const flag of [
      '--inspect',
      '--inspect=0.0.0.0:9229',
      '--inspect-brk',
      '--inspect-wait',
      '--inspect-port=9230',
    ]) {
      expect(serverRelaunch('verifier', { ...node24, execArgv: [flag] })).toBeUndefined()
      expect(serverRelaunch('verifier', { ...node24, nodeOptions: flag })).toBeUndefined()
    }
  })

  it('leaves a frame flag the operator gave, in any spelling, on the command line or in NODE_OPTIONS, and adds the rest', () => {
    const spellings = [
      '--async-context-frame',
      '--no-async-context-frame',
      '--async_context_frame',
      '--no-async_context_frame',
      '--no_async_context_frame',
      '--async-context-frame=true',
      '--async-context-frame=false',
    ]
    for (const flag of spellings) {
      expect(serverRelaunch('verifier', { ...node24, execArgv: [flag] })).toEqual({
        added: ['--max-semi-space-size=8'],
        args: [flag, '--max-semi-space-size=8', '/app/dist/cli/keygate.js', 'verifier', '--any-api'],
      })
      expect(serverRelaunch('verifier', { ...node24, nodeOptions: `--max-old-space-size=512 ${flag}` })?.added).toEqual(
        ['--max-semi-space-size=8'],
      )
    }
    // NODE_OPTIONS may quote an option.
    expect(serverRelaunch('verifier', { ...node24, nodeOptions: '"--async-context-frame"' })?.added).toEqual([
      '--max-semi-space-size=8',
    ])
    // A flag that only looks alike is not one.
    expect(serverRelaunch('verifier', { ...node24, nodeOptions: '--async-context-frame-x' })?.added).toEqual(BOTH)
  })

  it("leaves the operator's young generation or heap size, in any spelling V8 takes, and adds the rest", () => {
    for (const flag of [
      '--max-semi-space-size=32',
      '--max_semi_space_size=32',
      '-max-semi-space-size=32',
      '--min-semi-space-size=16',
      '--min_semi-space_size=16',
      // V8 refuses --max-heap-size beside both space sizes, and splits it itself.
      '--max-heap-size=512',
      '-max_heap_size=512',
    ]) {
      expect(serverRelaunch('verifier', { ...node24, execArgv: [flag] })?.added).toEqual(['--no-async-context-frame'])
      expect(serverRelaunch('verifier', { ...node24, nodeOptions: `"${flag}"` })?.added).toEqual([
        '--no-async-context-frame',
      ])
    }
    // Node honours double quotes around an option only: a single-quoted word is not one (node ignores it).
    expect(serverRelaunch('verifier', { ...node24, nodeOptions: "'--max-semi-space-size=32'" })?.added).toEqual(BOTH)
    expect(serverRelaunch('verifier', { ...node24, nodeOptions: '--max-semi-space-sizes=8' })?.added).toEqual(BOTH)
    // The old generation's size alone leaves V8's young generation where it was: still capped.
    expect(serverRelaunch('verifier', { ...node24, execArgv: ['--max-old-space-size=2048'] })?.added).toEqual(BOTH)
  })

  it('adds the cap only where V8 gave the process a heap of 1 GiB or more (below, its own young generation is smaller)', () => {
    expect(serverRelaunch('verifier', { ...node24, heapSizeLimit: 2 ** 30 })?.added).toEqual(BOTH)
    expect(serverRelaunch('verifier', { ...node24, heapSizeLimit: 2 ** 30 - 1 })?.added).toEqual([
      '--no-async-context-frame',
    ])
    expect(serverRelaunch('verifier', { ...node24, version: '22.15.0', heapSizeLimit: 512 * 2 ** 20 })).toBeUndefined()
  })

  it('leaves the young generation alone when the operator keeps allocation-site pretenuring on (the two cascade)', () => {
    for (const flag of [
      '--allocation-site-pretenuring',
      '--allocation_site_pretenuring',
      '-allocation-site-pretenuring',
    ]) {
      expect(serverRelaunch('verifier', { ...node24, execArgv: [flag] })?.added).toEqual(['--no-async-context-frame'])
    }
    expect(serverRelaunch('verifier', { ...node24, execArgv: ['--no-allocation-site-pretenuring'] })?.added).toEqual(
      BOTH,
    )
  })

  it('does not relaunch a process that has every flag already (the relaunched one: it never loops)', () => {
    const relaunched = serverRelaunch('verifier', node24)!
    expect(serverRelaunch('verifier', { ...node24, execArgv: relaunched.args.slice(0, 3) })).toBeUndefined()
    expect(
      serverRelaunch('verifier', { ...node24, version: '22.15.0', execArgv: ['--max-semi-space-size=8'] }),
    ).toBeUndefined()
  })
})

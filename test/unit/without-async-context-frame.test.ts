import { describe, expect, it } from 'vitest'
import { relaunchWithoutAsyncContextFrame, type NodeProcess } from '../../cli/without-async-context-frame.js'

const node24: NodeProcess = {
  version: '24.21.0',
  execArgv: ['--cpu-prof'],
  argv: ['/usr/bin/node', '/app/dist/cli/keygate.js', 'verifier', '--any-api'],
  nodeOptions: undefined,
  canExecve: true,
}

describe('relaunching a server without the async context frame', () => {
  it('relaunches the servers on Node 24 with the flag after the node flags they were given, then the script and its arguments', () => {
    for (const command of ['verifier', 'control-plane', 'dev'] as const) {
      expect(relaunchWithoutAsyncContextFrame(command, node24)).toEqual([
        '--cpu-prof',
        '--no-async-context-frame',
        '/app/dist/cli/keygate.js',
        'verifier',
        '--any-api',
      ])
    }
    expect(relaunchWithoutAsyncContextFrame('verifier', { ...node24, version: '26.0.0' })).toContain(
      '--no-async-context-frame',
    )
  })

  it('leaves the one-shot commands, older Nodes and a Node that cannot execve as they are', () => {
    expect(relaunchWithoutAsyncContextFrame('root-key create', node24)).toBeUndefined()
    expect(relaunchWithoutAsyncContextFrame('verifier', { ...node24, version: '22.15.0' })).toBeUndefined()
    expect(relaunchWithoutAsyncContextFrame('verifier', { ...node24, version: '20.19.5' })).toBeUndefined()
    expect(relaunchWithoutAsyncContextFrame('verifier', { ...node24, canExecve: false })).toBeUndefined()
  })

  it('leaves a frame flag the operator gave, either way, on the command line or in NODE_OPTIONS (and never loops)', () => {
    for (const flag of ['--async-context-frame', '--no-async-context-frame', '--experimental-async-context-frame']) {
      expect(relaunchWithoutAsyncContextFrame('verifier', { ...node24, execArgv: [flag] })).toBeUndefined()
      expect(
        relaunchWithoutAsyncContextFrame('verifier', { ...node24, nodeOptions: `--max-old-space-size=512  ${flag}` }),
      ).toBeUndefined()
    }
    // A flag that only looks alike is not one.
    expect(
      relaunchWithoutAsyncContextFrame('verifier', { ...node24, nodeOptions: '--async-context-frame-x' }),
    ).toBeDefined()
  })
})

import { describe, expect, it } from 'vitest'
import { relaunchWithoutAsyncContextFrame, type NodeProcess } from '../../cli/without-async-context-frame.js'

const node24: NodeProcess = {
  version: '24.21.0',
  execArgv: ['--cpu-prof'],
  argv: ['/usr/bin/node', '/app/dist/cli/keygate.js', 'verifier', '--any-api'],
  nodeOptions: undefined,
  canExecve: true,
  hasIpcChannel: false,
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

  it('leaves a process with an IPC channel (PM2, node --watch: execve would drop it) or an inspector flag as it is', () => {
    expect(relaunchWithoutAsyncContextFrame('verifier', { ...node24, hasIpcChannel: true })).toBeUndefined()
    for (const flag of [
      '--inspect',
      '--inspect=0.0.0.0:9229',
      '--inspect-brk',
      '--inspect-wait',
      '--inspect-port=9230',
    ]) {
      expect(relaunchWithoutAsyncContextFrame('verifier', { ...node24, execArgv: [flag] })).toBeUndefined()
      expect(relaunchWithoutAsyncContextFrame('verifier', { ...node24, nodeOptions: flag })).toBeUndefined()
    }
  })

  it('leaves a frame flag the operator gave, in any spelling, on the command line or in NODE_OPTIONS (and never loops)', () => {
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
      expect(relaunchWithoutAsyncContextFrame('verifier', { ...node24, execArgv: [flag] })).toBeUndefined()
      expect(
        relaunchWithoutAsyncContextFrame('verifier', { ...node24, nodeOptions: `--max-old-space-size=512\t${flag}` }),
      ).toBeUndefined()
    }
    // NODE_OPTIONS may quote an option.
    expect(
      relaunchWithoutAsyncContextFrame('verifier', { ...node24, nodeOptions: '"--async-context-frame"' }),
    ).toBeUndefined()
    // A flag that only looks alike is not one.
    expect(
      relaunchWithoutAsyncContextFrame('verifier', { ...node24, nodeOptions: '--async-context-frame-x' }),
    ).toBeDefined()
  })
})

import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'

const run = promisify(execFile)
const versionOf = async (node: string) => (await run(node, ['-p', 'process.version'])).stdout.trim()

// .ci/run runs the suite on the machine's Node and again on Node 24 by putting that Node first on the PATH. This
// proves from inside the run that it took: the worker, and the children the tests start, are the Node asked for.
// The title carries the version the worker ran on; .ci/run reads it back from the JSON report.
describe('the Node running the suite', () => {
  it(`runs on Node ${process.version}: the one asked for, and so are npm and the child processes the tests start`, async () => {
    // Set by .ci/run for each run; without it (a plain `npm test`) the run is on whatever node the PATH gives.
    const expected = process.env.KEYGATE_EXPECT_NODE
    if (expected) expect(process.version).toBe(expected)
    // The end-to-end tests start the CLI with process.execPath; scripts and shebangs (`env node`) find `node` on
    // the PATH.
    expect(await versionOf(process.execPath)).toBe(process.version)
    expect(await versionOf('node')).toBe(process.version)
    // npm sets this to the node it runs on (under `npm test`, `npx`): npm must not be left on another Node.
    const npmNode = process.env.npm_node_execpath
    if (npmNode) expect(await versionOf(npmNode)).toBe(process.version)
  })
})

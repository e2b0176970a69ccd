import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import autocannon from 'autocannon'
import type { LoadPlan, LoadResult } from './load.js'

/**
 * One autocannon run, in its own process so it can be pinned to its own core (`taskset`) away from the server
 * under test. Reads a LoadPlan from the file named by argv[2]; prints one LoadResult as JSON on stdout.
 */
const plan = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as LoadPlan
const headers = { 'content-type': 'application/json', ...plan.headers }

function requests(): autocannon.Request[] {
  const method = plan.method ?? 'POST'
  if (plan.randomKeys) {
    // A new random key on every request: nothing is ever cached for it.
    return [
      {
        method,
        path: plan.path,
        headers,
        setupRequest: (request) => ({
          ...request,
          body: JSON.stringify({ key: `bench_${randomBytes(12).toString('base64url')}` }),
        }),
      },
    ]
  }
  // One shared cursor over the bodies (or header sets) for every connection: each request takes the next one,
  // so connections never send the same key in lockstep (which would make concurrent writes to one key collide).
  let next = 0
  const { headerSets, bodies } = plan
  if (headerSets && headerSets.length > 0) {
    return [
      {
        method,
        path: plan.path,
        setupRequest: (request) => ({ ...request, headers: headerSets[next++ % headerSets.length]! }),
      },
    ]
  }
  if (bodies && bodies.length > 0) {
    return [
      {
        method,
        path: plan.path,
        headers,
        setupRequest: (request) => ({ ...request, body: bodies[next++ % bodies.length]! }),
      },
    ]
  }
  return [{ method, path: plan.path, headers: plan.headers ?? {} }]
}

const result = await autocannon({
  url: plan.url,
  connections: plan.connections,
  pipelining: plan.pipelining ?? 1,
  duration: plan.durationSeconds,
  ...(plan.overallRate ? { overallRate: plan.overallRate } : {}),
  requests: requests(),
})
const out: LoadResult = {
  rps: result.requests.average,
  p50: result.latency.p50,
  p99: result.latency.p99,
  max: result.latency.max,
  total: result.requests.total,
  non2xx: result.non2xx,
  errors: result.errors + result.timeouts,
}
process.stdout.write(JSON.stringify(out))

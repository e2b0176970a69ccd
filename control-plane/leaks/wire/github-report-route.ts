import { createHash, type KeyObject } from 'node:crypto'
import type { Readable } from 'node:stream'
import type { FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { ApiError, invalid } from '../../../shared/errors/errors.js'
import type { KeygateServer } from '../../../shared/http/keygate-server.js'
import { parseJsonBody } from '../../../shared/http/json-body.js'
import type { ControlPlaneDeps } from '../../control-plane-deps.js'
import { actOnLeak, type LeakReport } from '../act-on-leak.js'
import type { LeakVerdict } from '../leak-verdict.js'
import type { ReportSigningKeys } from '../github-public-keys.js'
import type { ReportRefusal } from '../leak-metrics.js'
import { signs } from '../report-signature.js'
import {
  DEFAULT_REPORT_READ_LIMITS,
  readReportBody,
  ReportReadSlots,
  type ReadSlot,
  type ReportReadLimits,
} from '../unverified-report-reads.js'

export const GITHUB_REPORT_PATH = '/v1/secret-scanning/github'

// GitHub batches matches; a report beyond these is not one of GitHub's.
const MAX_TOKENS = 1_000
const MAX_TOKEN_LENGTH = 1_024
const MAX_TEXT_LENGTH = 2_048
/**
 * A report's body is remembered this long: sent again within it, it is refused. GitHub's signed body carries no time,
 * so this is what bounds a replay; a claim is a few bytes, and GitHub sends few reports.
 */
const REPLAY_WINDOW_MS = 30 * 86_400_000
/**
 * A report is claimed this long while it is acted on, and kept for the replay window only once that is done: when
 * acting fails and the claim cannot be given back (the store is down, or the process dies), GitHub's retry is acted
 * on once this has passed, not a day later. Acting on the largest report takes a few seconds.
 */
const ACTING_WINDOW_MS = 60_000

const Labelled = Type.Array(
  Type.Object({
    token_hash: Type.String({ description: 'SHA-256 of the token, hex' }),
    token_type: Type.String({ description: 'The type the report gave' }),
    label: Type.Union([Type.Literal('true_positive'), Type.Literal('false_positive')], {
      description: '`true_positive`: a key of ours, acted on as its api says; `false_positive`: no key of ours',
    }),
  }),
)

/**
 * GitHub's secret-scanning partner endpoint: a JSON list of `{token, type, url, source}`, signed by GitHub with
 * ECDSA P-256 over the raw body (`Github-Public-Key-Identifier`, `Github-Public-Key-Signature`). Only a report whose
 * signature verifies with a key of the published set is read; one sent before (the same body, within 30 days) is
 * refused, since ECDSA signatures can be re-encoded and only the body says it is the same report. Each token is
 * acted on (act-on-leak.ts) and labelled in the answer, as the protocol's feedback asks. A report that fails half way
 * is forgotten, so that GitHub's retry is acted on: at once when the claim can be given back, after the acting window
 * when it cannot.
 */
export function registerGithubLeakReports(
  app: KeygateServer,
  deps: ControlPlaneDeps,
  keys: ReportSigningKeys,
  limits: ReportReadLimits = DEFAULT_REPORT_READ_LIMITS,
): void {
  const metrics = deps.leakMetrics
  const refuse = (reason: ReportRefusal, error: ApiError): never => {
    metrics.refused(reason)
    throw error
  }
  const slots = new ReportReadSlots(limits.concurrent, (reading) => metrics.reading(reading))
  // What the head of a report said, for its handler: the key it names, and its place among the bodies being read.
  const heads = new WeakMap<FastifyRequest, { key: KeyObject; signature: string; slot: ReadSlot }>()
  /**
   * A report's head, checked before its body is read: both headers, and a key the published set holds (an identifier
   * not held refetches the set at most once a minute: PublishedSigningKeys), then a place among the bodies read at
   * once. GitHub's identifiers are public: the body's size, time and number bound what a forged report can hold.
   */
  const checkHead = async (request: FastifyRequest) => {
    const identifier = request.headers['github-public-key-identifier']
    const signature = request.headers['github-public-key-signature']
    if (typeof identifier !== 'string' || typeof signature !== 'string' || !identifier || !signature) {
      return refuse(
        'unsigned',
        new ApiError(
          'INVALID_SIGNATURE',
          'a leak report must be signed: Github-Public-Key-Identifier and Github-Public-Key-Signature',
        ),
      )
    }
    // Logged as a 503 is, by its message, with the fetch's failure (a status, a timeout, a refused connection).
    const key = await keys.keyFor(identifier).catch((err: unknown) => {
      throw new ApiError(
        'UNAVAILABLE',
        'the keys that sign leak reports cannot be fetched now; send it again',
        undefined,
        undefined,
        { cause: err },
      )
    })
    if (!key)
      refuse('unknown_key', new ApiError('INVALID_SIGNATURE', 'Github-Public-Key-Identifier names no known key'))
    const slot = slots.take()
    if (!slot) {
      refuse(
        'busy',
        new ApiError('RATE_LIMITED', 'too many leak reports are being received at once; send it again', {
          'retry-after': '1',
        }),
      )
    }
    heads.set(request, { key: key!, signature, slot: slot! })
  }
  const giveBack = (request: FastifyRequest) => heads.get(request)?.slot()
  app.register(async (scoped: KeygateServer) => {
    // The signature covers the bytes as sent: this route alone keeps them (a parsed and re-serialised body differs).
    scoped.removeContentTypeParser('application/json')
    scoped.addContentTypeParser('application/json', async (request: FastifyRequest, payload: Readable) => {
      try {
        return await readReportBody(payload, request.headers['content-length'], limits)
      } catch (err) {
        if (err instanceof ApiError) refuse(err.code === 'REQUEST_TIMEOUT' ? 'slow' : 'malformed', err)
        throw err
      } finally {
        giveBack(request)
      }
    })
    // A report that ends before its body is read (another content type, the client gone) gives its place back too.
    scoped.addHook('onResponse', async (request) => giveBack(request))
    scoped.addHook('onRequestAbort', async (request) => giveBack(request))
    scoped.post(
      GITHUB_REPORT_PATH,
      {
        schema: {
          response: { 200: Labelled },
        },
        // Refused before its body is read: a slow upload of a report that cannot be GitHub's costs nothing to hold.
        onRequest: checkHead,
      },
      async (request) => {
        const { key, signature } = heads.get(request)!
        const body = request.body
        if (!Buffer.isBuffer(body)) return refuse('malformed', invalid('body', 'send the report as application/json'))
        if (!signs(key, body, signature)) {
          refuse(
            'bad_signature',
            new ApiError('INVALID_SIGNATURE', 'Github-Public-Key-Signature does not sign this body'),
          )
        }
        const reports = reportsOf(body, refuse)
        const digest = createHash('sha256').update(body).digest('hex')
        if (!(await deps.store.leakReports.claimReport(digest, ACTING_WINDOW_MS))) {
          refuse('replay', new ApiError('CONFLICT', 'this leak report was received before: nothing was done again'))
        }
        const reporter = {
          actor: { rootKeyId: 'github', requestId: request.id },
          name: 'github',
          log: request.log,
        }
        const answers = []
        try {
          // A token listed twice (found in two places) is acted on once, for its first place, and labelled alike.
          const verdicts = new Map<string, LeakVerdict>()
          for (const report of reports) {
            let verdict = verdicts.get(report.key)
            if (verdict === undefined) {
              verdict = await actOnLeak(deps, reporter, report)
              verdicts.set(report.key, verdict)
              metrics.token('github', verdict)
            }
            answers.push({ token_hash: sha256Hex(report.key), token_type: report.type, label: verdict.label })
          }
        } catch (err) {
          await deps.store.leakReports
            .releaseReport(digest)
            .catch((releaseErr: unknown) =>
              request.log.warn(
                { err: releaseErr },
                'a leak report that failed could not be given back: GitHub retries it once its claim expires',
              ),
            )
          throw err
        }
        // Acted on: the answer stands even if the claim cannot be kept (a replay after the acting window is acted on
        // again, as a report of the same leak would be).
        await deps.store.leakReports
          .keepReport(digest, REPLAY_WINDOW_MS)
          .catch((err: unknown) =>
            request.log.warn({ err }, 'a leak report acted on could not be kept against replays'),
          )
        return answers
      },
    )
  })
}

const sha256Hex = (text: string) => createHash('sha256').update(text).digest('hex')

/** The tokens of a signed report; anything but GitHub's shape is a 400 naming what is wrong. */
function reportsOf(
  body: Buffer,
  refuse: (reason: ReportRefusal, error: ApiError) => never,
): Array<LeakReport & { type: string }> {
  let parsed: unknown
  try {
    parsed = parseJsonBody(body.toString('utf8'))
  } catch (err) {
    return refuse('malformed', err as ApiError)
  }
  if (!Array.isArray(parsed))
    return refuse('malformed', invalid('body', 'must be a list of {token, type, url, source}'))
  if (parsed.length > MAX_TOKENS) return refuse('malformed', invalid('body', `holds more than ${MAX_TOKENS} tokens`))
  return parsed.map((entry: unknown, i) => {
    const { token, type, url, source } = (entry ?? {}) as Record<string, unknown>
    if (typeof token !== 'string' || token.length === 0 || token.length > MAX_TOKEN_LENGTH) {
      return refuse('malformed', invalid(`${i}.token`, `must be a string of 1 to ${MAX_TOKEN_LENGTH} characters`))
    }
    const texts = { type, url, source }
    for (const [name, value] of Object.entries(texts)) {
      if (value !== undefined && (typeof value !== 'string' || value.length > MAX_TEXT_LENGTH)) {
        return refuse('malformed', invalid(`${i}.${name}`, `must be a string of at most ${MAX_TEXT_LENGTH} characters`))
      }
    }
    return {
      key: token,
      type: typeof type === 'string' ? type : '',
      url: url as string | undefined,
      source: source as string | undefined,
    }
  })
}

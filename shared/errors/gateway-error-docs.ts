import type { ErrorDoc } from './error-docs.js'
import type { ErrorCode } from './errors.js'
import type { GatewayRefusalCode } from './gateway-codes.js'

/**
 * The pages of the codes a gateway refuses with that are not also codes of the error table (NOT_FOUND,
 * INSUFFICIENT_PERMISSIONS and RATE_LIMITED are, and their pages say both): the reverse proxy's bodies and
 * /v1/authorize's API_ID_REQUIRED link to them.
 */
export const GATEWAY_ERROR_DOCS: Readonly<Record<Exclude<GatewayRefusalCode, ErrorCode>, ErrorDoc>> = {
  MISSING_KEY: {
    title: 'The request carried no API key',
    meaning: [
      'A gateway (forward-auth at `/v1/authorize`, or the reverse proxy) found no key in the key header (`KEY_HEADER`, `X-API-Key` unless configured) nor in `Authorization: Bearer`. The answer carries `WWW-Authenticate: Bearer realm="keygate"`.',
    ],
    fix: [
      'Send the key: `-H "X-API-Key: $KEY"` (or the header the message names), or `-H "Authorization: Bearer $KEY"`.',
    ],
  },
  DISABLED: {
    title: 'The key is disabled',
    meaning: [
      "The key exists, but it was disabled (keys.updateKey `enabled: false`, or the api's leak policy after a leak was reported). Every verifier refuses it within the revocation bound.",
    ],
    fix: [
      'Use another key. The key\'s owner, with a root key, can enable it again: `keys.updateKey {"keyId": …, "enabled": true}` (`keys.getKey` shows `leaked` if it was reported leaked: then make a new one with `keys.rerollKey` instead).',
    ],
  },
  EXPIRED: {
    title: 'The key has expired',
    meaning: ['The key had an expiry (`expires`), and it has passed.'],
    fix: [
      'Use another key, or, with a root key, give this one a later expiry: `keys.updateKey {"keyId": …, "expires": <unix ms>}` (`null`: never).',
    ],
  },
  FORBIDDEN: {
    title: 'The key may not be used here',
    meaning: [
      "The key belongs to another api than the one the gateway checks it against (`X-Keygate-Api-Id` from the gateway, or the verifier's `--api-id`), or the request came from an address outside the key's or its api's IP allow-list.",
    ],
    fix: [
      "Use a key of this api. For an allow-list, send from an allowed address, or (with a root key) add the address to the key's or the api's `ipWhitelist` (`keys.updateKey`, `apis.updateApi`); behind a proxy, check which address the verifier counts (`CLIENT_ADDRESS`, `TRUSTED_PROXIES`).",
    ],
  },
  API_ID_REQUIRED: {
    title: 'The verifier does not know which api keys must belong to',
    meaning: [
      "A deployment mistake, not the client's: the gateway sent no `X-Keygate-Api-Id`, and the verifier runs without `--api-id` (`AUTHORIZE_API_ID`) or `--any-api`. No key is checked against every api unless the operator said so; the verifier logs this once.",
    ],
    fix: [
      "Have the gateway set `X-Keygate-Api-Id` to the api's id, or start the verifier with `--api-id <apiId>` (or `--any-api` to accept a key of any api).",
    ],
  },
  USAGE_EXCEEDED: {
    title: 'The key has no credits left',
    meaning: [
      'The key carries credits (`remaining`) and they are spent; its refill, if it has one, has not come yet. `Retry-After` is on the answer.',
    ],
    fix: [
      'Wait for the refill, or, with a root key, add credits: `keys.updateRemaining {"keyId": …, "op": "increment", "value": n}`.',
    ],
  },
}

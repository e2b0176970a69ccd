/**
 * Ids and a key shaped exactly like real ones (newId, generateKey), for the API reference's examples. They name
 * nothing that exists: where an example needs an api or a key, its description says which call returns the id.
 */
export const WIRE_EXAMPLES = {
  apiId: 'api_1CX8vqzf82AxTQNodKXXH8',
  keyId: 'key_1CX8vvRBhstWqpZHNqeFeX',
  key: 'sk_LXq5RcAiu5vihojMjbXaZo',
  requestId: 'req_1CX8vvRBjP4dUq9kWm2TnE',
  rootKeyId: 'root_1CX8vvRBgH2CvVAh5oiMQV',
  permissionId: 'perm_1CX8vvRBk5mZqT3vYwXpLs',
  roleId: 'role_1CX8vvRBmN7cGh2JkQwErT',
  /** A rate-limit namespace's name (namespaces are made on first use, so an example names one by its name). */
  namespaceName: 'email.outbound',
  identityId: 'id_1CX8vvRBpQ4rTs6UvWxYzA',
  webhookEndpointId: 'whep_1CX8vvRBsU5tVw7XyZaBcD',
  /** Where a webhook endpoint receives events. */
  webhookUrl: 'https://example.com/webhooks/keygate',
  /** A customer portal's slug (portal.createPortal's example makes another). */
  portalSlug: 'acme-keys',
  portalSessionId: 'ps_1CX8vvRBtV6uWx8YzAbCdE',
} as const

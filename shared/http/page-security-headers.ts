/**
 * The headers of every page Keygate serves to a browser (the admin console, the API docs, the error pages) and of
 * each file such a page loads. An admin pastes a root key into the console and the docs, which share an origin: no
 * other site may frame them (clickjacking), no file may be sniffed into another type, and no link may carry a URL out
 * in a Referer. `sources` are the page's own Content-Security-Policy directives: what it may load and call; the rules
 * on framing, <base> and form targets are added here, so no page can leave them out.
 */
export function pageSecurityHeaders(sources: readonly string[]): Readonly<Record<string, string>> {
  return Object.freeze({
    'content-security-policy': [...sources, "base-uri 'none'", "form-action 'none'", "frame-ancestors 'none'"].join(
      '; ',
    ),
    // frame-ancestors' predecessor, for browsers that predate it.
    'x-frame-options': 'DENY',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    // Another site's window that opens the page keeps no handle on it, and no other site can embed its files.
    'cross-origin-opener-policy': 'same-origin',
    'cross-origin-resource-policy': 'same-origin',
  })
}

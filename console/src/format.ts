/** How the console writes times and amounts: the admin's locale and time zone, to the minute. */
const TIME = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' })

export function formatTime(ms: number | undefined): string {
  return ms === undefined ? '' : TIME.format(new Date(ms))
}

const SECOND = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' })

/** A time to the second, for a log whose entries come seconds apart (a delivery's retries). */
export function formatSecond(ms: number): string {
  return SECOND.format(new Date(ms))
}

/** A key's expiry at a glance: never, when, or that it has passed. */
export function formatExpiry(expires: number | undefined, now = Date.now()): string {
  if (expires === undefined) return 'never'
  return expires <= now ? `expired ${formatTime(expires)}` : formatTime(expires)
}

/** A key's credits at a glance: unlimited when it carries none. */
export function formatCredits(remaining: number | undefined): string {
  return remaining === undefined ? 'unlimited' : remaining.toLocaleString()
}

/** A duration in milliseconds as a person says it: 60000 → "1 min". */
export function formatDuration(ms: number): string {
  const units: [number, string][] = [
    [86_400_000, 'd'],
    [3_600_000, 'h'],
    [60_000, 'min'],
    [1000, 's'],
  ]
  for (const [size, name] of units) if (ms >= size && ms % size === 0) return `${ms / size} ${name}`
  return `${ms} ms`
}

/** JSON for people: indented. */
export function formatJson(value: unknown): string {
  return JSON.stringify(value, null, 2)
}

/** A `<input type="datetime-local">` value for a time, in the browser's zone, and back. */
export function toLocalInput(ms: number | undefined): string {
  if (ms === undefined) return ''
  const date = new Date(ms - new Date(ms).getTimezoneOffset() * 60_000)
  return date.toISOString().slice(0, 16)
}

export function fromLocalInput(value: string): number | undefined {
  if (!value) return undefined
  const ms = new Date(value).getTime()
  return Number.isNaN(ms) ? undefined : ms
}

/** A comma- or space-separated list as typed into a field: "a, b c" → ["a", "b", "c"]. */
export function splitList(text: string): string[] {
  return text
    .split(/[\s,]+/)
    .map((item) => item.trim())
    .filter(Boolean)
}

/** A count with its noun: 1 key, 2 keys. */
export function countOf(count: number, noun: string): string {
  return `${count.toLocaleString()} ${noun}${count === 1 ? '' : 's'}`
}

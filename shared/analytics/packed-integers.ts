/**
 * Integers packed as zigzag varints (protobuf's sint64 wire form: 7 bits a byte, small magnitudes of either sign in
 * few bytes), carried as base64 text. A batch's rows are mostly small numbers — an offset of a few hundred ms, an
 * index into the batch's keys, a code — so a row of seven takes about eight bytes (about eleven as base64) against
 * twenty-odd as a JSON array; and writing one is a few stores into a byte array that lives as long as the recorder,
 * where a JSON array of numbers would grow on the heap with every row and be walked by the collector until the flush.
 * Hand-written rather than a library's: what matters here is that a write allocates nothing (protobufjs' writer makes
 * an object per value).
 */

/**
 * The largest magnitude written exactly: zigzag doubles a magnitude, and doubles are exact integers to 2^53. Larger
 * magnitudes are written as this, with their sign.
 */
export const LARGEST_PACKED = 2 ** 52 - 1
/** Bytes one value takes at most: LARGEST_PACKED's zigzag form has 53 bits, 7 a byte. */
const MOST_BYTES = 8

/** Collects integers into one growing byte array, reused from one take to the next. */
export class PackedIntegersWriter {
  private bytes: Uint8Array
  private length = 0

  constructor(initialBytes = 4_096) {
    this.bytes = new Uint8Array(initialBytes)
  }

  /** Adds `value`: an integer; anything else is rounded (NaN as 0) and held within ±LARGEST_PACKED. */
  write(value: number): void {
    if (this.length + MOST_BYTES > this.bytes.length) this.grow()
    const bytes = this.bytes
    let at = this.length
    if (value >= -0x40000000 && value < 0x40000000 && (value | 0) === value) {
      // Within 31 bits once zigzagged: the whole of it in 32-bit integer arithmetic (nearly every value).
      let zigzag = (value << 1) ^ (value >> 31)
      while (zigzag >= 0x80) {
        bytes[at++] = (zigzag & 0x7f) | 0x80
        zigzag >>>= 7
      }
      bytes[at++] = zigzag
    } else {
      const whole = Number.isNaN(value) ? 0 : Math.max(-LARGEST_PACKED, Math.min(LARGEST_PACKED, Math.round(value)))
      let zigzag = whole >= 0 ? whole * 2 : -whole * 2 - 1
      while (zigzag >= 0x80) {
        bytes[at++] = (zigzag % 0x80) | 0x80
        zigzag = Math.floor(zigzag / 0x80)
      }
      bytes[at++] = zigzag
    }
    this.length = at
  }

  /** Whether nothing was written since the last take. */
  get empty(): boolean {
    return this.length === 0
  }

  /** What was written since the last take, as base64; the writer starts over (keeping its array). */
  take(): string {
    const text = Buffer.from(this.bytes.buffer, this.bytes.byteOffset, this.length).toString('base64')
    this.length = 0
    return text
  }

  private grow(): void {
    const larger = new Uint8Array(Math.max(this.bytes.length * 2, this.length + MOST_BYTES))
    larger.set(this.bytes.subarray(0, this.length))
    this.bytes = larger
  }
}

/**
 * The integers `packed` holds (PackedIntegersWriter's take), in order; an Error if it ends inside a value or holds one
 * no writer writes (beyond ±LARGEST_PACKED: eight bytes hold 56 bits, past what a double holds exactly, so such a
 * value, damage, would read as another, its sign even).
 */
export function unpackIntegers(packed: string): number[] {
  const bytes = Buffer.from(packed, 'base64')
  const values: number[] = []
  let at = 0
  while (at < bytes.length) {
    let zigzag = 0
    let scale = 1
    let byte: number
    do {
      if (at >= bytes.length || scale > 2 ** 49)
        throw new Error('packed integers end inside a value, or one is too long')
      byte = bytes[at++]!
      zigzag += (byte & 0x7f) * scale
      scale *= 0x80
    } while (byte >= 0x80)
    if (zigzag > 2 * LARGEST_PACKED) throw new Error('packed integers end inside a value, or one is too long')
    values.push(zigzag % 2 === 0 ? zigzag / 2 : -(zigzag + 1) / 2)
  }
  return values
}

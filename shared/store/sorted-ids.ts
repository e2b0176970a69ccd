/** A sorted set of ids with paging after a cursor in O(log n + page): the memory store's per-api index. */
export class SortedIds {
  private readonly ids: string[] = []

  get size(): number {
    return this.ids.length
  }

  add(id: string): void {
    const at = this.lowerBound(id)
    if (this.ids[at] !== id) this.ids.splice(at, 0, id)
  }

  delete(id: string): void {
    const at = this.lowerBound(id)
    if (this.ids[at] === id) this.ids.splice(at, 1)
  }

  /** Ids greater than `cursor` (all ids when absent), ascending. */
  *after(cursor: string | undefined): Generator<string> {
    let at = cursor === undefined ? 0 : this.lowerBound(cursor)
    if (cursor !== undefined && this.ids[at] === cursor) at++
    for (; at < this.ids.length; at++) yield this.ids[at]!
  }

  private lowerBound(id: string): number {
    let low = 0
    let high = this.ids.length
    while (low < high) {
      const mid = (low + high) >>> 1
      if (this.ids[mid]! < id) low = mid + 1
      else high = mid
    }
    return low
  }
}

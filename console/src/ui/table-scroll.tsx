import type { ComponentChildren } from 'preact'

/**
 * A table wider than the screen (a phone) scrolls sideways inside this, not the whole page. The region is named and
 * takes focus, so that a keyboard user can scroll it with the arrow keys and a screen reader says what it holds.
 */
export function TableScroll({ label, children }: { label: string; children: ComponentChildren }) {
  return (
    <div class="table-scroll" role="region" aria-label={label} tabIndex={0}>
      {children}
    </div>
  )
}

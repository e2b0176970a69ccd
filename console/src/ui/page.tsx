import type { ComponentChildren } from 'preact'
import { useContext, useEffect, useRef, useState } from 'preact/hooks'
import { DescribeError, ErrorWords } from './error-words.js'

/**
 * A page: its heading, and the tab's title to match. The heading takes focus when the page opens, so that a screen
 * reader announces where a link led (a single-page app changes no document a browser would announce).
 */
export function Page(props: {
  title: string
  children: ComponentChildren
  /** False where a field should have focus instead (signing in). */
  focusHeading?: boolean
}) {
  const { title, children, focusHeading = true } = props
  const heading = useRef<HTMLHeadingElement>(null)
  useEffect(() => {
    document.title = `${title} · Keygate console`
    if (focusHeading) heading.current?.focus()
  }, [title, focusHeading])
  return (
    <>
      <h1 tabIndex={-1} ref={heading}>
        {title}
      </h1>
      {children}
    </>
  )
}

/**
 * A failed call, said in words as the page's API says them (DescribeError; the console's: a 403 names what the root
 * key lacks), announced as it appears.
 */
export function ErrorNote({ error }: { error: unknown }) {
  return <ErrorWords error={error} describe={useContext(DescribeError)} />
}

/** What a write did, announced politely. */
export function StatusNote({ text }: { text: string | undefined }) {
  return (
    <p role="status" class="status">
      {text ?? ''}
    </p>
  )
}

/** A list page's StatusNote text, and say(text): a write did something, so say it and reload the list. */
export function useStatus(reload: () => void): [string | undefined, (text: string) => void] {
  const [status, setStatus] = useState<string>()
  const say = (text: string) => {
    setStatus(text)
    reload()
  }
  return [status, say]
}

/** A record's fields, as a definition list; absent values are left out. */
export function Fields({ rows }: { rows: [string, ComponentChildren][] }) {
  return (
    <dl class="fields">
      {rows
        .filter(([, value]) => value !== undefined && value !== null && value !== '')
        .map(([name, value]) => (
          <div key={name}>
            <dt>{name}</dt>
            <dd>{value}</dd>
          </div>
        ))}
    </dl>
  )
}

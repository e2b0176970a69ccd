import { useState } from 'preact/hooks'
import type { KeygateApi } from '../api.js'
import { Field } from '../ui/fields.js'
import { ErrorNote, Page } from '../ui/page.js'
import { Pager, useCursorPages } from '../ui/pager.js'
import { useLoad } from '../ui/use-load.js'
import { AuditTable } from './audit-table.js'

const NO_FILTER = { action: '', rootKeyId: '', apiId: '', keyId: '' }

/**
 * The audit log (audit.list, a root key with `*`): newest first, filtered by action, root key, api or key, paged.
 * `keyId` starts it filtered to that key (a key page links here for its older entries).
 */
export function AuditPage({ api, keyId = '' }: { api: KeygateApi; keyId?: string }) {
  const pages = useCursorPages()
  const [typed, setTyped] = useState({ ...NO_FILTER, keyId })
  const [filter, setFilter] = useState({ ...NO_FILTER, keyId })
  const log = useLoad(
    () =>
      api.get('audit.list', {
        limit: 50,
        cursor: pages.cursor,
        ...filter,
      }),
    [api, pages.cursor, filter],
  )
  const field = (name: keyof typeof NO_FILTER) => ({
    value: typed[name],
    onChange: (value: string) => setTyped({ ...typed, [name]: value }),
  })
  return (
    <Page title="Audit log">
      <form
        role="search"
        aria-label="Filter the audit log"
        onSubmit={(event) => {
          event.preventDefault()
          pages.first()
          setFilter(
            Object.fromEntries(Object.entries(typed).map(([name, value]) => [name, value.trim()])) as typeof NO_FILTER,
          )
        }}
      >
        <Field label="Action" {...field('action')} placeholder="keys.updateKey" />
        <Field label="Root key id" {...field('rootKeyId')} placeholder="root_…" />
        <Field label="Api id" {...field('apiId')} placeholder="api_…" />
        <Field label="Key id" {...field('keyId')} placeholder="key_…" />
        <button type="submit">Filter</button>
      </form>
      <ErrorNote error={log.error} />
      {log.data ? <AuditTable entries={log.data.entries} /> : null}
      {log.data?.cursor && log.data.entries.length < 50 ? (
        <p class="muted">Only part of the log was searched for this page: Next page searches further.</p>
      ) : null}
      <Pager
        what="audit entries"
        page={pages.page}
        nextCursor={log.data?.cursor}
        onNext={pages.next}
        onPrevious={pages.previous}
      />
    </Page>
  )
}

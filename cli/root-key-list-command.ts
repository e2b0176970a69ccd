import { rootKeyView } from '../control-plane/root-keys/root-keys.js'
import { rootKeyListConfig } from '../shared/config/config.js'
import type { RootKeyRecord } from '../shared/keys/records.js'
import { withRootKeys } from './root-key-session.js'

/** One row of `list --json`: every field always there (null when unknown), never a key or a hash. */
function jsonRow(record: RootKeyRecord) {
  const view = rootKeyView(record)
  return {
    id: view.id,
    name: view.name ?? null,
    start: view.start ?? null,
    permissions: view.permissions,
    createdAt: view.createdAt,
    lastUsedAt: view.lastUsedAt ?? null,
  }
}

const when = (ms: number | undefined) => (ms === undefined ? '-' : new Date(ms).toISOString().slice(0, 16) + 'Z')

/** Columns padded to their widest cell; the last column is not padded. */
function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)))
  return rows
    .map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  '))
    .join('\n')
}

/**
 * `keygate root-key list`: the stored root keys, oldest first, as a table (or, with --json, the array) on stdout;
 * whether the bootstrap root key is on goes to stderr.
 */
export async function run(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const config = rootKeyListConfig(argv, env)
  const { records, bootstrapDisabled } = await withRootKeys(config, async (rootKeys) => ({
    records: await rootKeys.list(),
    bootstrapDisabled: await rootKeys.bootstrapDisabled(),
  }))
  if (config.json) {
    process.stdout.write(`${JSON.stringify(records.map(jsonRow))}\n`)
  } else {
    const header = ['ID', 'NAME', 'START', 'PERMISSIONS', 'CREATED', 'LAST USED']
    const rows = records.map((r) => [
      r.id,
      r.name ?? '-',
      r.start ?? '-',
      r.permissions.join(','),
      when(r.createdAt),
      when(r.lastUsedAt),
    ])
    process.stdout.write(`${table([header, ...rows])}\n`)
  }
  process.stderr.write(
    `${records.length} stored root key${records.length === 1 ? '' : 's'}; the bootstrap root key (KEYGATE_ROOT_KEY) is ${bootstrapDisabled ? 'disabled' : 'enabled'}.\n`,
  )
  return 0
}

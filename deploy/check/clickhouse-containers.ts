import type { IContainer } from 'kubernetes-models/v1/Container'
import { imageName, type PodTemplate } from './pod-templates.js'

const CLICKHOUSE_IMAGES = new Set(['clickhouse-server'])

/** Where the official image keeps its data (its VOLUME), and where its entrypoint copies users.xml. */
const DATA_DIR = '/var/lib/clickhouse'
const TMP_DIR = '/tmp'

/**
 * Variables with which the official image's entrypoint writes a users file into /etc/clickhouse-server/users.d/
 * (unless CLICKHOUSE_SKIP_USER_SETUP=1: its first start then only logs in with them).
 */
const USER_VARIABLES = ['CLICKHOUSE_USER', 'CLICKHOUSE_PASSWORD', 'CLICKHOUSE_PASSWORD_FILE']

export function isClickhouseContainer(container: IContainer): boolean {
  return CLICKHOUSE_IMAGES.has(imageName(container.image))
}

/**
 * What the analytics server needs to start and to keep Keygate's rows, read from its container: an image pinned to a
 * version (Keygate checks queries with the server's own parser and reads its EXPLAIN output, and ClickHouse may not
 * read parts a newer version wrote, so it must not move by itself), its data directory on a volume that outlives the
 * pod, and, on a read-only root filesystem, what the official image's entrypoint writes: a users file in /etc
 * (unless told not to) and a copy of users.xml in /tmp.
 */
export function checkClickhouseContainer(container: IContainer, pod: PodTemplate): string[] {
  const problems: string[] = []
  const tag = imageTag(container.image)
  // A digest pins the image too.
  if (!container.image?.includes('@') && (tag === undefined || !/^\d/.test(tag)))
    problems.push(
      `image ${container.image ?? ''} names no ClickHouse version: ${tag ?? 'latest'} moves to another by itself (and ClickHouse cannot go back to an older one on the same data); pin one, such as clickhouse/clickhouse-server:26.7`,
    )

  const mounts = container.volumeMounts ?? []
  const data = mounts.find((mount) => trimSlash(mount.mountPath) === DATA_DIR)
  if (!data) {
    problems.push(
      `no volume at ${DATA_DIR}: ClickHouse keeps every analytics row there, and they would go with the container`,
    )
  } else if (pod.spec.volumes?.find((volume) => volume.name === data.name)?.emptyDir) {
    problems.push(
      `${DATA_DIR} is an emptyDir: every analytics row goes with the pod; use a persistent volume (a StatefulSet's volumeClaimTemplates)`,
    )
  }

  if (container.securityContext?.readOnlyRootFilesystem === true) {
    const env = new Map((container.env ?? []).map((variable) => [variable.name, variable.value]))
    const set = USER_VARIABLES.filter((name) => env.has(name))
    if (env.get('CLICKHOUSE_SKIP_USER_SETUP') !== '1') {
      problems.push(
        `CLICKHOUSE_SKIP_USER_SETUP is not "1": the image's entrypoint writes /etc/clickhouse-server/users.d/default-user.xml${set.length ? ` (it was given ${set.join(', ')})` : ''}, which the read-only root filesystem refuses, and the container exits; set it, and define the users in a mounted users.d file (<password from_env="…"/>)`,
      )
    }
    if (!mounts.some((mount) => trimSlash(mount.mountPath) === TMP_DIR))
      problems.push(
        `no volume at ${TMP_DIR}: the image's entrypoint copies users.xml there, which the read-only root filesystem refuses, and the container exits (mount an emptyDir)`,
      )
  }
  return problems
}

/** The tag of `repository[:tag][@digest]`, if it names one. */
function imageTag(image: string | undefined): string | undefined {
  const reference = (image ?? '').split('@')[0]!
  const slash = reference.lastIndexOf('/')
  const colon = reference.lastIndexOf(':')
  return colon > slash ? reference.slice(colon + 1) : undefined
}

const trimSlash = (path: string) => (path.length > 1 ? path.replace(/\/+$/, '') : path)

import { Registry } from 'prom-client'
import { auditedKey } from '../../control-plane/keys/key-response.js'
import { beforeEach, describe, expect, it } from 'vitest'
import pino from 'pino'
import { AuditLog, CLI_ACTOR } from '../../control-plane/audit/audit-log.js'
import { RootKeyEntities } from '../../control-plane/root-keys/root-key-entities.js'
import { RootKeys } from '../../control-plane/root-keys/root-keys.js'
import { createWebhookMetrics } from '../../control-plane/webhooks/webhook-metrics.js'
import { entityAddress } from '../../shared/entity.js'
import { deriverStage, HOUR, testEndpoint } from '../support/deriver-stage.js'
import { LOG_TRIMMED } from '../../shared/store/change-log/change-log-store.js'
import { overriding } from '../support/store-overrides.js'
import { newApi, newKey } from './contract-records.js'

describe('EventDeriver on the memory store', () => {
  let stage: Awaited<ReturnType<typeof deriverStage>>
  let store: typeof stage.store
  let clock: typeof stage.clock
  const deriver: typeof stage.deriver = (...args) => stage.deriver(...args)
  const queued = () => stage.queued()

  beforeEach(async () => {
    stage = await deriverStage()
    ;({ store, clock } = stage)
  })

  it('starts from where the logs stand, then queues each change once per endpoint that wants it', async () => {
    const api = await newApi(store)
    const before = await store.keys.createKey(newKey(api.id))
    const first = deriver()
    await first.runOnce()
    // What happened before the deriver first ran is not news.
    expect(await queued()).toEqual([])

    const created = await store.keys.createKey(newKey(api.id))
    if (!created || !before) throw new Error('create failed')
    await store.keys.updateKey(created.record.id, { enabled: false }, created.record.rev, clock.now())
    await store.keys.deleteKey(created.record.id)
    await first.runOnce()
    const keyId = created.record.id
    expect(await queued()).toEqual(
      expect.arrayContaining([
        ['key.created', 'whep_all', keyId],
        ['key.updated', 'whep_all', keyId],
        ['key.deleted', 'whep_all', keyId],
        ['key.deleted', 'whep_deletes', keyId],
      ]),
    )
    expect(await queued()).toEqual([])
  })

  it('sends key.leaked for a leak mark, with where it leaked, and key.updated only for what else changed', async () => {
    const api = await newApi(store)
    await deriver().runOnce()
    const created = await stage.createKey(api.id)
    const leaked = {
      at: clock.now(),
      url: 'https://github.com/o/r',
      source: 'content',
      reporter: 'github',
      action: 'disable' as const,
    }
    const marked = await store.keys.updateKey(
      created.record.id,
      { leaked, enabled: false },
      created.record.rev,
      clock.now(),
    )
    if (!marked) throw new Error('update failed')
    const notified = await store.keys.updateKey(
      created.record.id,
      { leaked: { ...leaked, action: 'notify' } },
      marked.record.rev,
      clock.now(),
    )
    if (!notified) throw new Error('update failed')
    await deriver().runOnce()
    const events = (await stage.deliveries())
      .filter(({ endpointId }) => endpointId === 'whep_all')
      .map(({ event }) => event)
    // Queued in id order, not the order of the changes.
    const told = events.map((event) => [event.type, event.data.changed])
    expect(told).toHaveLength(4)
    expect(told).toEqual(
      expect.arrayContaining([
        ['key.created', undefined],
        ['key.leaked', undefined],
        ['key.updated', ['enabled']],
        ['key.leaked', undefined],
      ]),
    )
    expect(told.filter(([type]) => type === 'key.leaked')).toHaveLength(2)
    // Each is derived from the record as it is now: both carry the latest mark.
    expect(events.find((event) => event.type === 'key.leaked')!.data).toMatchObject({
      keyId: created.record.id,
      leaked: { url: 'https://github.com/o/r', reporter: 'github' },
    })
  })

  // The worker checks again when a delivery comes due, but a delivery queued against the scope is work and a leak risk.
  it("queues an endpoint scoped to apis only its apis' key events, and none about no api", async () => {
    const [mine, theirs] = [await newApi(store), await newApi(store)]
    await store.webhooks.createEndpoint(testEndpoint('whep_scoped', { apiIds: [mine.id] }))
    await deriver().runOnce()
    const [own, other] = [await stage.createKey(mine.id), await stage.createKey(theirs.id)]
    await store.entities.writeEntity(entityAddress('identity', 'customer-scoped'), 'id_scoped', 'created', {
      id: 'id_scoped',
      externalId: 'customer-scoped',
    })
    await deriver().runOnce()
    const rows = await queued()
    expect(rows.filter(([, endpointId]) => endpointId === 'whep_scoped')).toEqual([
      ['key.created', 'whep_scoped', own.record.id],
    ])
    // The unscoped endpoint beside it had them all.
    expect(rows.filter(([, endpointId]) => endpointId === 'whep_all').map(([type, , keyId]) => [type, keyId])).toEqual(
      expect.arrayContaining([
        ['key.created', own.record.id],
        ['key.created', other.record.id],
        ['identity.created', undefined],
      ]),
    )
  })

  // A replay goes by when an event was made: what the endpoints there were then were sent.
  it('keeps each event with when it was made beside when its change happened', async () => {
    const api = await newApi(store)
    await deriver().runOnce()
    const created = await stage.createKey(api.id, { createdAt: clock.now() })
    const happened = clock.now()
    // The deriver reads it a minute late.
    clock.advance(60_000)
    await deriver().runOnce()
    const [delivery] = (await stage.deliveries()).filter(({ endpointId }) => endpointId === 'whep_all')
    expect(delivery!.event).toMatchObject({ type: 'key.created', at: happened, madeAt: clock.now() })
    expect(await store.webhooks.getEvent(delivery!.event.id)).toMatchObject({ at: happened, madeAt: clock.now() })
    expect(delivery!.event.data.keyId).toBe(created.record.id)
  })

  it('queues nothing twice when a change is derived again (a crash before the cursor moved)', async () => {
    const api = await newApi(store)
    await deriver().runOnce()
    const cursors = await store.webhooks.readCursors()
    const created = await store.keys.createKey(newKey(api.id))
    if (!created) throw new Error('create failed')
    await deriver().runOnce()
    // Rewind the cursor to before the create, as if the deriver had died before writing it.
    await store.webhooks.writeCursor(created.event.shard, cursors.get(created.event.shard)!)
    await deriver().runOnce()
    const rows = await queued()
    expect(rows.filter(([type]) => type === 'key.created')).toEqual([['key.created', 'whep_all', created.record.id]])
  })

  it('takes a shard that went back (a failover to a replica that missed writes) as a gap, not as changes seen', async () => {
    const api = await newApi(store)
    await deriver().runOnce()
    const first = await store.keys.createKey(newKey(api.id))
    if (!first) throw new Error('create failed')
    await deriver().runOnce()
    await queued()
    // The cursor is ahead of the shard's head: the writes it saw are gone, and their revisions will be reused.
    const { shard, epoch, rev } = first.event
    await store.webhooks.writeCursor(shard, { epoch, rev: rev + 5 })
    const registry = new Registry()
    await deriver('test', { metrics: createWebhookMetrics(registry, async () => 0) }).runOnce()
    expect(await registry.getSingleMetricAsString('keygate_webhook_log_gaps_total')).toMatch(/reason="rollback"} 1/)
    expect((await store.webhooks.readCursors()).get(shard)).toEqual({ epoch, rev })
    // The next change in that shard, at a revision the cursor had passed, is sent.
    let next = await store.keys.createKey(newKey(api.id))
    while (next && next.event.shard !== shard) next = await store.keys.createKey(newKey(api.id))
    if (!next) throw new Error('create failed')
    await deriver().runOnce()
    expect((await queued()).map(([type, , keyId]) => [type, keyId])).toContainEqual(['key.created', next.record.id])
  })

  it('reports how many changes it has yet to derive, and 0 on a control plane that is not deriving', async () => {
    const api = await newApi(store)
    await deriver().runOnce()
    for (let i = 0; i < 3; i++) await store.keys.createKey(newKey(api.id))
    const behind = async (holder: string) => {
      const registry = new Registry()
      await deriver(holder, { metrics: createWebhookMetrics(registry, async () => 0) }).runOnce()
      return (await registry.getSingleMetric('keygate_webhook_deriver_behind_changes')!.get()).values[0]?.value
    }
    expect(await behind('another')).toBe(0)
    expect(await behind('test')).toBe(3)
    expect(await behind('test')).toBe(0)
  })

  it('sends key.credits.low and key.credits.exhausted from the credit notices, each once', async () => {
    const api = await newApi(store)
    const created = await store.keys.createKey(newKey(api.id, { remaining: 3 }))
    if (!created) throw new Error('create failed')
    await deriver().runOnce()
    await queued()
    const { id: keyId, hash } = created.record
    const notice = { keyId, apiId: api.id, lowThreshold: 2 }
    for (let i = 0; i < 3; i++) await store.keys.spendCredits(hash, 1, undefined, clock.now(), notice)
    await deriver().runOnce()
    await deriver().runOnce()
    const due = await store.webhooks.claimDue(clock.now() + HOUR, 1, 100)
    const events = await Promise.all(due.map((delivery) => store.webhooks.getEvent(delivery.eventId)))
    const credits = events.filter((event) => event!.type.startsWith('key.credits'))
    expect(credits.map((event) => [event!.type, event!.data]).sort()).toEqual([
      ['key.credits.exhausted', { keyId, apiId: api.id, remaining: 0 }],
      ['key.credits.low', { keyId, apiId: api.id, remaining: 2, threshold: 2 }],
    ])
  })

  it('derives on one control plane at a time: the lease holder', async () => {
    const api = await newApi(store)
    const holder = deriver('a')
    const other = deriver('b')
    await holder.runOnce()
    await other.runOnce()
    const created = await store.keys.createKey(newKey(api.id))
    await other.runOnce()
    expect(await queued()).toEqual([])
    await holder.runOnce()
    expect((await queued()).map(([type]) => type)).toEqual(['key.created'])
    expect(created).toBeTruthy()
    // Stopping gives the lease up: the other derives at its next look, not a lease later (a rolling restart).
    await holder.stop()
    const next = await store.keys.createKey(newKey(api.id))
    await other.runOnce()
    expect(await queued()).toEqual([['key.created', 'whep_all', next && next.record.id]])
  })

  it('says what an update changed, in the names the API uses', async () => {
    const api = await newApi(store)
    await deriver().runOnce()
    const created = await store.keys.createKey(newKey(api.id))
    if (!created) throw new Error('create failed')
    await store.keys.updateKey(created.record.id, { remaining: 3, enabled: false }, created.record.rev, clock.now())
    await deriver().runOnce()
    const due = await store.webhooks.claimDue(clock.now() + HOUR, 1, 100)
    const events = await Promise.all(due.map((delivery) => store.webhooks.getEvent(delivery.eventId)))
    const updated = events.find((event) => event?.type === 'key.updated')
    expect(updated?.data).toMatchObject({ keyId: created.record.id, changed: ['credits', 'enabled'], enabled: false })
  })

  it('sends key.expiring the lead time before expiry and key.expired at it, once each, and not for an expiry moved', async () => {
    const api = await newApi(store)
    await deriver().runOnce()
    const expires = clock.now() + 10 * 24 * HOUR
    const kept = await store.keys.createKey(newKey(api.id, { expires }))
    const moved = await store.keys.createKey(newKey(api.id, { expires }))
    if (!kept || !moved) throw new Error('create failed')
    await deriver().runOnce()
    await store.keys.updateKey(moved.record.id, { expires: expires + 30 * 24 * HOUR }, moved.record.rev, clock.now())
    await deriver().runOnce()
    await queued()

    clock.advance(3 * 24 * HOUR - 1)
    await deriver().runOnce()
    expect(await queued()).toEqual([])
    clock.advance(1)
    await deriver().runOnce()
    await deriver('another').runOnce()
    expect(await queued()).toEqual([['key.expiring', 'whep_all', kept.record.id]])
    clock.advance(7 * 24 * HOUR)
    await deriver().runOnce()
    expect(await queued()).toEqual([['key.expired', 'whep_all', kept.record.id]])
    clock.advance(30 * 24 * HOUR)
    await deriver().runOnce()
    expect((await queued()).map(([type, , keyId]) => [type, keyId]).sort()).toEqual([
      ['key.expired', moved.record.id],
      ['key.expiring', moved.record.id],
    ])
  })

  it('reports each update of a key, however many are derived in one look, and none for one that changed nothing', async () => {
    const api = await newApi(store)
    await deriver().runOnce()
    const created = await stage.createKey(api.id)
    const disabled = await store.keys.updateKey(created.record.id, { enabled: false }, created.record.rev, clock.now())
    const renamed = await store.keys.updateKey(
      created.record.id,
      { name: 'renamed' },
      disabled!.record.rev,
      clock.now(),
    )
    await store.keys.updateKey(created.record.id, { name: 'renamed' }, renamed!.record.rev, clock.now())
    await deriver().runOnce()
    const updates = (await stage.deliveries()).filter(({ event }) => event.type === 'key.updated')
    // Two events (their ids apart: each from its own revision), not one nor three.
    expect(updates.map(({ event }) => event.data.changed).sort()).toEqual([['enabled'], ['name']])
    expect(new Set(updates.map(({ event }) => event.id)).size).toBe(2)
  })

  it('tells identities, rerolls and root keys (created, rolled, revoked) apart', async () => {
    const api = await newApi(store)
    const rootKeys = new RootKeys({
      store,
      audit: new AuditLog(store.audit, clock, pino({ level: 'silent' }), auditedKey),
      clock,
    })
    await deriver().runOnce()
    const identity = { id: 'id_1', externalId: 'customer-1', createdAt: clock.now() }
    await store.entities.writeEntity(entityAddress('identity', 'customer-1'), identity.id, 'created', identity)
    const old = await stage.createKey(api.id)
    const rerolled = await stage.createKey(api.id, { rerolledFrom: old.record.id })
    const kept = await rootKeys.create(CLI_ACTOR, { permissions: ['api.*.read_key'] })
    const rolled = await rootKeys.roll(CLI_ACTOR, kept.record.id)
    await deriver().runOnce()
    const events = (await stage.deliveries()).filter(({ endpointId }) => endpointId === 'whep_all')
    const data = (type: string) => events.filter(({ event }) => event.type === type).map(({ event }) => event.data)
    expect(data('identity.created')).toEqual([{ identityId: 'id_1', externalId: 'customer-1' }])
    expect(data('key.rerolled')).toEqual([{ keyId: old.record.id, apiId: api.id, newKeyId: rerolled.record.id }])
    expect(
      data('rootKey.created')
        .map((d) => d.rootKeyId)
        .sort(),
    ).toEqual([kept.record.id, rolled.record.id].sort())
    expect(data('rootKey.rolled')).toEqual([{ rootKeyId: kept.record.id, newRootKeyId: rolled.record.id }])
    expect(data('rootKey.revoked')).toEqual([{ rootKeyId: kept.record.id }])
  })

  // The created change is derived when the root key is a tombstone already: it was created all the same, and its
  // revoke (its own change, derived in the same look) is one event, not two.
  it('reports a root key created and revoked between two looks as created once and revoked once', async () => {
    const rootKeys = new RootKeys({
      store,
      audit: new AuditLog(store.audit, clock, pino({ level: 'silent' }), auditedKey),
      clock,
    })
    await deriver().runOnce()
    const { record } = await rootKeys.create(CLI_ACTOR, { permissions: ['api.*.read_key'] })
    await rootKeys.revoke(CLI_ACTOR, record.id)
    await deriver().runOnce()
    const events = (await stage.deliveries()).filter(({ endpointId }) => endpointId === 'whep_all')
    expect(events.map(({ event }) => [event.type, event.data.rootKeyId]).sort()).toEqual([
      ['rootKey.created', record.id],
      ['rootKey.revoked', record.id],
    ])
    // What the root key was created with, though it was a tombstone when the look came.
    expect(events.find(({ event }) => event.type === 'rootKey.created')?.event.data).toEqual({
      rootKeyId: record.id,
      permissions: ['api.*.read_key'],
    })
    // A tombstone where nothing was published (a revoke racing the create's publish) is a revoke only.
    const unpublished = { id: 'root_unpublished', hash: 'h'.repeat(44) }
    await new RootKeyEntities(store.entities).tombstone(unpublished)
    await deriver().runOnce()
    const after = (await stage.deliveries()).filter(({ endpointId }) => endpointId === 'whep_all')
    expect(after.map(({ event }) => [event.type, event.data.rootKeyId])).toEqual([['rootKey.revoked', unpublished.id]])
  })

  // Receivers keep what each event says: a key created, renamed and deleted before a look is told as each write left
  // it, not three times as it ended (or as nothing, once deleted).
  it('describes each change of a key as its write left it, whatever came after', async () => {
    const api = await newApi(store)
    await deriver().runOnce()
    const identity = { id: 'id_snap', externalId: 'customer-snap', createdAt: clock.now() }
    await store.entities.writeEntity(entityAddress('identity', identity.externalId), identity.id, 'created', identity)
    const created = await stage.createKey(api.id, {
      name: 'first',
      meta: { plan: 'free' },
      ownerId: identity.externalId,
      remaining: 10,
    })
    const keyId = created.record.id
    const renamed = await store.keys.updateKey(keyId, { name: 'second' }, created.record.rev, clock.now())
    await store.keys.updateKey(keyId, { meta: { plan: 'pro' }, remaining: 4 }, renamed!.record.rev, clock.now())
    await store.keys.deleteKey(keyId)
    await deriver().runOnce()
    const events = (await stage.deliveries()).filter(({ endpointId }) => endpointId === 'whep_all')
    const data = (type: string) => events.filter(({ event }) => event.type === type).map(({ event }) => event.data)
    const identityNames = { identityId: 'id_snap', externalId: 'customer-snap' }
    expect(data('key.created')).toEqual([
      expect.objectContaining({
        keyId,
        name: 'first',
        meta: { plan: 'free' },
        remaining: 10,
        enabled: true,
        ...identityNames,
      }),
    ])
    expect(data('key.updated')).toHaveLength(2)
    expect(data('key.updated')).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'second', meta: { plan: 'free' }, remaining: 10, changed: ['name'] }),
        expect.objectContaining({ name: 'second', meta: { plan: 'pro' }, remaining: 4, changed: ['credits', 'meta'] }),
      ]),
    )
    expect(data('key.deleted')).toEqual([
      expect.objectContaining({
        keyId,
        apiId: api.id,
        name: 'second',
        meta: { plan: 'pro' },
        remaining: 4,
        ...identityNames,
      }),
    ])
  })

  it('describes each change of an identity as its write left it, a delete with its last state', async () => {
    await deriver().runOnce()
    const address = entityAddress('identity', 'customer-2')
    const created = await store.entities.writeEntity(address, 'id_2', 'created', {
      id: 'id_2',
      externalId: 'customer-2',
      meta: { tier: 1 },
      createdAt: clock.now(),
    })
    if (typeof created === 'string') throw new Error(created)
    await store.entities.writeEntity(
      address,
      'id_2',
      'updated',
      { id: 'id_2', externalId: 'customer-2', meta: { tier: 2 }, createdAt: clock.now() },
      created.rev,
    )
    await store.entities.writeEntity(address, 'id_2', 'deleted', null)
    await deriver().runOnce()
    const events = (await stage.deliveries()).filter(({ endpointId }) => endpointId === 'whep_all')
    expect(events.map(({ event }) => [event.type, event.data])).toEqual(
      expect.arrayContaining([
        ['identity.created', { identityId: 'id_2', externalId: 'customer-2', meta: { tier: 1 } }],
        ['identity.updated', { identityId: 'id_2', externalId: 'customer-2', meta: { tier: 2 } }],
        ['identity.deleted', { identityId: 'id_2', externalId: 'customer-2', meta: { tier: 2 } }],
      ]),
    )
    expect(events).toHaveLength(3)
  })

  it('forgets the snapshots it has derived, and describes a change whose snapshot is gone as the record is now', async () => {
    const registry = new Registry()
    const api = await newApi(store)
    await deriver().runOnce()
    const created = await stage.createKey(api.id, { name: 'first' })
    const { shard, rev } = created.event
    await deriver().runOnce()
    expect((await store.snapshots.readSnapshots(shard, 0, rev)).size).toBe(0)
    const renamed = await store.keys.updateKey(created.record.id, { name: 'second' }, rev, clock.now())
    await store.keys.updateKey(created.record.id, { name: 'third' }, renamed!.record.rev, clock.now())
    await store.snapshots.forgetSnapshots(shard, renamed!.event.rev)
    await stage.deliveries()
    await deriver('test', { metrics: createWebhookMetrics(registry, async () => 0) }).runOnce()
    const names = (await stage.deliveries())
      .filter(({ endpointId }) => endpointId === 'whep_all')
      .map(({ event }) => event.data.name)
    expect(names).toEqual(['third', 'third'])
    expect(await registry.getSingleMetricAsString('keygate_webhook_snapshots_missing_total')).toMatch(/ 1$/m)
  })

  // The identity an event names is the one of its write: a customer offboarded (key, then identity deleted) or an
  // identity re-created under the same externalId before the look changes nothing of what earlier events say.
  it('names the identity a key had at each write, whatever becomes of it before the look', async () => {
    const api = await newApi(store)
    const address = entityAddress('identity', 'customer-a')
    await store.entities.writeEntity(address, 'id_A', 'created', { id: 'id_A', externalId: 'customer-a', createdAt: 1 })
    const kept = await stage.createKey(api.id, { ownerId: 'customer-a' })
    await deriver().runOnce()
    await stage.deliveries()
    const created = await stage.createKey(api.id, { ownerId: 'customer-a' })
    await store.keys.deleteKey(kept.record.id)
    await store.entities.writeEntity(address, 'id_A', 'deleted', null)
    await store.entities.writeEntity(address, 'id_B', 'created', { id: 'id_B', externalId: 'customer-a', createdAt: 2 })
    await deriver().runOnce()
    const events = (await stage.deliveries()).filter(({ endpointId }) => endpointId === 'whep_all')
    const named = (type: string, keyId: string) =>
      events.find(({ event }) => event.type === type && event.data.keyId === keyId)?.event.data
    expect(named('key.deleted', kept.record.id)).toMatchObject({ externalId: 'customer-a', identityId: 'id_A' })
    expect(named('key.created', created.record.id)).toMatchObject({ externalId: 'customer-a', identityId: 'id_A' })
  })

  it('describes changes written while the look reads them as they were written', async () => {
    const api = await newApi(store)
    await deriver().runOnce()
    const created = await stage.createKey(api.id, { name: 'first' })
    let wrote = false
    const racing = overriding(store, {
      changes: {
        readChanges: async (...args) => {
          if (!wrote) {
            wrote = true
            const second = await store.keys.updateKey(
              created.record.id,
              { name: 'second' },
              created.record.rev,
              clock.now(),
            )
            await store.keys.updateKey(created.record.id, { name: 'third' }, second!.record.rev, clock.now())
          }
          return store.changes.readChanges(...args)
        },
      },
    })
    await deriver('test', { changes: racing.changes }).runOnce()
    await deriver().runOnce()
    const names = (await stage.deliveries())
      .filter(({ endpointId, event }) => endpointId === 'whep_all' && event.type === 'key.updated')
      .map(({ event }) => event.data.name)
    expect(names.sort()).toEqual(['second', 'third'])
  })

  it('forgets the snapshots of changes it skips (a log trimmed past its cursor)', async () => {
    const api = await newApi(store)
    await deriver().runOnce()
    const created = await stage.createKey(api.id)
    const { shard, rev } = created.event
    const trimmed = overriding(store, { changes: { readChanges: async () => LOG_TRIMMED } })
    await deriver('test', { changes: trimmed.changes }).runOnce()
    expect((await store.snapshots.readSnapshots(shard, 0, rev)).size).toBe(0)
  })

  it("takes no snapshot of another record for a change's (one a lost sequence left at its revision)", async () => {
    const api = await newApi(store)
    await deriver().runOnce()
    const created = await stage.createKey(api.id, { name: 'mine' })
    const stale = overriding(store, {
      snapshots: {
        readSnapshots: async () => new Map([[created.event.rev, { doc: { id: 'key_other', name: 'not mine' } }]]),
      },
    })
    await deriver('test', { snapshots: stale.snapshots }).runOnce()
    const events = (await stage.deliveries()).filter(({ endpointId }) => endpointId === 'whep_all')
    expect(events.map(({ event }) => [event.type, event.data.name])).toEqual([['key.created', 'mine']])
  })
})

import { notFound } from '../../shared/errors/errors.js'
import type { EntityStore } from '../../shared/store/entities/entity-store.js'
import type { WriteListener } from '../write-listener.js'
import { NamedRecords } from '../named-records.js'
import type { PortalRecord } from './portal-record.js'

/** How portal.createSession (and the root-key routes) answer a portal they cannot name: Unkey's words. */
export const portalNotFound = () => notFound('portal', 'Portal not found.')

/** Portals, stored as entities `portal:<id>`, each unique by its slug (named-records.ts). */
export class PortalRecords {
  private readonly records: NamedRecords<PortalRecord>

  constructor(store: EntityStore, now: () => number, onWrite: WriteListener) {
    this.records = new NamedRecords<PortalRecord>(store, 'portal', 'portal', (portal) => portal.slug, now, onWrite)
  }

  /** The portal a request names by its id or its slug, or null. */
  async find(idOrSlug: string): Promise<PortalRecord | null> {
    return (await this.records.get(idOrSlug)) ?? (await this.records.findByName(idOrSlug))
  }

  async get(id: string): Promise<PortalRecord | null> {
    return this.records.get(id)
  }

  /** Creates the portal; 409 if its slug is taken. */
  async create(portal: PortalRecord): Promise<PortalRecord> {
    return this.records.create(portal)
  }

  /** Applies `change` to the freshest record (the slug never changes: it is the record's name). */
  async update(id: string, change: (current: PortalRecord) => PortalRecord): Promise<PortalRecord> {
    return this.records.update(id, change)
  }

  async delete(id: string): Promise<PortalRecord> {
    return this.records.delete(id)
  }

  /** Portals in creation order, at most `max`. */
  async list(max: number): Promise<PortalRecord[]> {
    return this.records.list(max)
  }
}

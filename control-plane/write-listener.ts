import type { KeyWrite } from '../shared/store/api-keys/api-key-store.js'

/** Told of every change this control plane writes (a key's or an entity's), as soon as the store has it. */
export type WriteListener = (write: Pick<KeyWrite, 'event'>) => void

import { createInterface } from 'node:readline'

/**
 * The core-speed probe's process (bench/lib/core-speed.ts), pinned to the core it times. For each line on stdin it
 * does one fixed piece of work and prints the CPU milliseconds it took. The work reads a 16 MB table in a scattered
 * order, so it leans on the caches and memory a server's heap does: what a VM's neighbours slow down without taking
 * any of the core's time. It allocates nothing while it works, so no collection lands in a reading.
 */
const WORDS = 1 << 22
const table = new Uint32Array(WORDS)
for (let i = 0; i < WORDS; i++) table[i] = Math.imul(i, 2654435761) >>> 0

function work(): number {
  let hash = 0
  // 7919 is odd: the stride visits every word once.
  for (let i = 0; i < WORDS; i++) hash = (Math.imul(hash, 31) + table[Math.imul(i, 7919) & (WORDS - 1)]!) | 0
  return hash
}

// Compiled before the first reading is asked for, so that none times the interpreter.
for (let i = 0; i < 5; i++) work()

let sink = 0
for await (const _ of createInterface({ input: process.stdin })) {
  const before = process.cpuUsage()
  sink ^= work()
  const { user, system } = process.cpuUsage(before)
  process.stdout.write(`${(user + system) / 1000}\n`)
}
// Keeps the work from being optimised away.
if (sink === 0.5) console.error(sink)

// Loaded into a Keygate process (NODE_OPTIONS=--import=…, kept across its relaunch): its wall clock, Date.now, runs
// KEYGATE_TEST_CLOCK_SHIFT_MS ahead of the machine's, so that a test of real processes can bring an hour's end within
// a minute. Every process of a test gets the same shift: they agree on the time, as hosts synced by NTP do.
const shift = Number(process.env.KEYGATE_TEST_CLOCK_SHIFT_MS ?? 0)
if (!Number.isFinite(shift)) throw new Error('KEYGATE_TEST_CLOCK_SHIFT_MS must be a number of milliseconds')
if (shift !== 0) {
  const machine = Date.now
  Date.now = () => machine() + shift
}

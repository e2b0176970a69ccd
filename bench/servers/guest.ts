/**
 * A bench server run as a guest inside another node process (`node --import …/guest.js`): GUEST names the server
 * (bench/servers/GUEST.ts), GUEST_PORT its port. bench:cpu-host runs the ceiling and the bare proxy inside an idle
 * verifier this way, to tell what the verifier's process costs a server in it from what keygate's own code costs.
 * The guest's own SIGTERM handler (exit at once) then ends the host too: fine for a bench, which only stops it.
 */
const guest = process.env.GUEST
const guestPort = process.env.GUEST_PORT
if (guest === undefined || !/^[a-z-]+$/.test(guest) || guestPort === undefined)
  throw new Error('guest.js needs GUEST (a bench server name) and GUEST_PORT')
// The servers read PORT when they start listening, as their own processes would: it is the guest's only while it does.
const hostPort = process.env.PORT
process.env.PORT = guestPort
await import(`./${guest}.js`)
if (hostPort === undefined) delete process.env.PORT
else process.env.PORT = hostPort

// prom-client's default metrics, one module each (prom-client 15 has no `exports` map: its files are its API as
// much as its index is). Each registers its metrics on a registry, as collectDefaultMetrics calls them.
declare module 'prom-client/lib/metrics/*.js' {
  import type { DefaultMetricsCollectorConfiguration, Registry, RegistryContentType } from 'prom-client'

  const register: (registry: Registry, config: DefaultMetricsCollectorConfiguration<RegistryContentType>) => void
  export default register
}

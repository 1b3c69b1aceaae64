// Modules of undici and prom-client loaded on their own (src/base/undici-core.ts, src/metrics/prom-client-core.ts); their types are the libraries' published ones.
declare module 'undici/lib/dispatcher/agent.js' {
  import type { Agent } from 'undici';
  const AgentModule: typeof Agent;
  export default AgentModule;
}

declare module 'undici/lib/api/api-request.js' {
  import type { Dispatcher } from 'undici';
  function requestModule(this: Dispatcher, options: Dispatcher.RequestOptions): Promise<Dispatcher.ResponseData>;
  export default requestModule;
}

// The prom-client modules src/metrics/prom-client-core.ts loads on their own; their types are prom-client's.
declare module 'prom-client/lib/registry.js' {
  import type { Registry } from 'prom-client';
  const RegistryModule: typeof Registry;
  export default RegistryModule;
}

declare module 'prom-client/lib/counter.js' {
  import type { Counter } from 'prom-client';
  const CounterModule: typeof Counter;
  export default CounterModule;
}

declare module 'prom-client/lib/gauge.js' {
  import type { Gauge } from 'prom-client';
  const GaugeModule: typeof Gauge;
  export default GaugeModule;
}

declare module 'prom-client/lib/histogram.js' {
  import type { Histogram } from 'prom-client';
  const HistogramModule: typeof Histogram;
  export default HistogramModule;
}

declare module 'prom-client/lib/defaultMetrics.js' {
  import type { collectDefaultMetrics } from 'prom-client';
  const collectDefaultMetricsModule: typeof collectDefaultMetrics;
  export default collectDefaultMetricsModule;
}

// The two undici modules src/undici-core.ts loads on their own; their types are undici's published ones.
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

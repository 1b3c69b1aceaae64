/** What the simulator was asked and what it answered, for tests and benchmarks to assert on. */
export class RequestCounters {
  private totalRequests = 0;
  private readonly routes = new Map<string, number>();
  private readonly statuses = new Map<number, number>();
  private challenges = 0;
  private stale = 0;
  private injected = 0;

  /** Every request received, including those answered 401 or hit by a fault. */
  get total(): number {
    return this.totalRequests;
  }

  /** Requests per route template: `GET /v2/servers/{server}/vhosts/{vhost}/monitoring/current`. */
  get byRoute(): Record<string, number> {
    return Object.fromEntries(this.routes);
  }

  /** Responses per status code (hung and reset requests have none). */
  get byStatus(): Record<number, number> {
    return Object.fromEntries(this.statuses);
  }

  /** 401 answers (each carries a challenge). */
  get authChallenges(): number {
    return this.challenges;
  }

  /** 401 answers with `stale=true`. */
  get staleChallenges(): number {
    return this.stale;
  }

  /** Requests a fault was applied to. */
  get faultsApplied(): number {
    return this.injected;
  }

  route(key: string): number {
    return this.routes.get(key) ?? 0;
  }

  status(code: number): number {
    return this.statuses.get(code) ?? 0;
  }

  reset(): void {
    this.totalRequests = 0;
    this.routes.clear();
    this.statuses.clear();
    this.challenges = 0;
    this.stale = 0;
    this.injected = 0;
  }

  recordRequest(routeKey: string): void {
    this.totalRequests++;
    this.routes.set(routeKey, (this.routes.get(routeKey) ?? 0) + 1);
  }

  recordStatus(code: number): void {
    this.statuses.set(code, (this.statuses.get(code) ?? 0) + 1);
  }

  recordChallenge(stale: boolean): void {
    this.challenges++;
    if (stale) this.stale++;
  }

  recordFault(): void {
    this.injected++;
  }
}

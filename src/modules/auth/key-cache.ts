import type { ApiKey } from './api-key.entity.js';

/**
 * The keys requests were authenticated with, each kept `ttlMs` (below a second) so a burst of
 * requests with one key runs its lookup once. A key changed through this process (deactivated,
 * deleted, its user's role changed or removed) is forgotten at once; one changed by another
 * replica or the CLI stops working here when its entry runs out, within `ttlMs`. Unknown keys are
 * never kept, so guessing fills nothing; at most `maxEntries`, the oldest dropped first.
 */
export class KeyCache {
  private readonly entries = new Map<string, { key: ApiKey; until: number }>();
  /** Moves on every clear(); a lookup that started before one is not kept (it may have read the old row). */
  private generation = 0;

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  get(lookup: string): ApiKey | undefined {
    if (this.ttlMs <= 0) return undefined;
    const entry = this.entries.get(lookup);
    if (!entry) return undefined;
    if (entry.until <= this.now()) {
      this.entries.delete(lookup);
      return undefined;
    }
    return entry.key;
  }

  /** Where a lookup starts: pass it to set() so a change committed meanwhile is not hidden. */
  mark(): number {
    return this.generation;
  }

  set(lookup: string, key: ApiKey, mark: number): void {
    if (this.ttlMs <= 0 || mark !== this.generation) return;
    this.entries.delete(lookup);
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(lookup, { key, until: this.now() + this.ttlMs });
  }

  /** Forgets every key: called after any change to keys or users made through this process. */
  clear(): void {
    this.generation += 1;
    this.entries.clear();
  }
}

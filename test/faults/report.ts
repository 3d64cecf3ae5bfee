// One line per assertion, a summary at the end; the exit code follows the failures.

export interface Summary {
  passed: number;
  failed: number;
}

export class Report {
  private passed = 0;
  private failed = 0;

  section(title: string): void {
    console.log(`\n== ${title}`);
  }

  /** Records one assertion: `ok <name>` or `FAIL <name>: <details>`. Returns whether it held. */
  check(name: string, ok: boolean, details = ''): boolean {
    if (ok) {
      this.passed++;
      console.log(`ok   ${name}${details ? ` (${details})` : ''}`);
    } else {
      this.failed++;
      console.log(`FAIL ${name}${details ? `: ${details}` : ''}`);
    }
    return ok;
  }

  note(text: string): void {
    console.log(`     ${text}`);
  }

  summary(): Summary {
    return { passed: this.passed, failed: this.failed };
  }
}

/** The first few items of a list, for a FAIL line that stays one line; '' for none. */
export function sample<T>(items: T[], n = 3): string {
  const shown = items.slice(0, n).map((item) => JSON.stringify(item));
  return shown.join('; ') + (items.length > n ? `; … ${items.length - n} more` : '');
}

/** `counts`, then a sample of the offending items when there are any. */
export function withSample<T>(counts: string, items: T[]): string {
  return items.length ? `${counts}; ${sample(items)}` : counts;
}

// A small JSON client for seeding and for the equivalence check: fetch (undici, keep-alive), the key in x-api-key.

export interface Answer {
  status: number;
  text: string;
  json: unknown;
}

export class ApiClient {
  readonly key: string;
  readonly base: string;

  constructor(base: string, key: string) {
    this.base = base;
    this.key = key;
  }

  async request(method: string, path: string, body?: unknown): Promise<Answer> {
    const response = await fetch(`${this.base}${path}`, {
      method,
      headers: { 'x-api-key': this.key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    let json: unknown = undefined;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: the caller sees the text
    }
    return { status: response.status, text, json };
  }

  /** The JSON of a 2xx answer; anything else throws with the answer in the message. */
  async ok<T = any>(method: string, path: string, body?: unknown): Promise<T> {
    const answer = await this.request(method, path, body);
    if (answer.status < 200 || answer.status > 299) {
      throw new Error(`${method} ${path} answered ${answer.status}: ${answer.text.slice(0, 500)}`);
    }
    return answer.json as T;
  }

  get<T = any>(path: string): Promise<T> {
    return this.ok<T>('GET', path);
  }

  post<T = any>(path: string, body?: unknown): Promise<T> {
    return this.ok<T>('POST', path, body);
  }
}

/** Runs `task` over `items`, at most `concurrency` at a time; results in the items' order. */
export async function inParallel<T, R>(items: readonly T[], concurrency: number, task: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await task(items[index]!, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return results;
}

import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

type Json = Record<string, any>;

export interface ContractViolation {
  method: string;
  path: string;
  status: number;
  problem: string;
}

interface Operation {
  method: string;
  template: string;
  matcher: RegExp;
  responses: Json;
}

/** JSON pointer escaping of one path segment (RFC 6901). */
function pointer(segment: string): string {
  return segment.replaceAll('~', '~0').replaceAll('/', '~1');
}

/**
 * The REST door's own OpenAPI document as a response checker: every answer of a documented
 * operation must have a declared status, the declared content type and a body that the
 * declared schema accepts. Undocumented paths and methods (404/405 answers) are not operations
 * and are not checked here.
 */
export class OpenApiContract {
  // The document is not checked against the meta-schema here (npm run lint:openapi does that): compiling it per test file cost a second.
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true, validateSchema: false });
  private readonly operations: Operation[] = [];
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(readonly document: Json) {
    (addFormats as unknown as (ajv: Ajv2020) => void)(this.ajv);
    this.ajv.addSchema(document, 'openapi');
    for (const [template, item] of Object.entries(document.paths as Json)) {
      const matcher = new RegExp(`^${template.replace(/\{\w+\}/g, '[^/]+')}$`);
      for (const [method, operation] of Object.entries(item as Json)) {
        this.operations.push({ method: method.toUpperCase(), template, matcher, responses: (operation as Json).responses });
      }
    }
    // A literal segment wins over a parameter (/api/agents/x/test before /api/agents/{id}/…).
    this.operations.sort((a, b) => b.template.replace(/\{\w+\}/g, '').length - a.template.replace(/\{\w+\}/g, '').length);
  }

  private readonly recorded = new Set<string>();

  /**
   * Notes an operation and the status it answered, once per process, for the run's coverage report
   * (test/support/openapi-coverage-report.mjs) when jest's globalSetup gave a folder for it.
   */
  private record(key: string, status: number): void {
    const dir = process.env.OPENAPI_COVERAGE_DIR;
    const line = `${status} ${key}`;
    if (!dir || this.recorded.has(line)) return;
    if (this.recorded.size === 0) writeFileSync(join(dir, 'operations.json'), JSON.stringify(this.operationKeys().sort()));
    this.recorded.add(line);
    appendFileSync(join(dir, `${process.pid}.log`), `${line}\n`);
  }

  /** Every documented operation as `METHOD /template`. */
  operationKeys(): string[] {
    return this.operations.map((operation) => `${operation.method} ${operation.template}`);
  }

  /** The documented operation a request is answered by, if any. */
  find(method: string, path: string): Operation | undefined {
    const bare = path.split('?')[0]!;
    return this.operations.find((operation) => operation.method === method.toUpperCase() && operation.matcher.test(bare));
  }

  /** Problems with one answer; [] when it is as documented (or is not a documented operation). */
  check(method: string, path: string, status: number, contentType: string | null, body: unknown): ContractViolation[] {
    const operation = this.find(method, path);
    if (!operation) return [];
    this.record(`${method.toUpperCase()} ${operation.template}`, status);
    const violation = (problem: string): ContractViolation[] => [{ method: method.toUpperCase(), path: operation.template, status, problem }];
    const declared = operation.responses[String(status)] as Json | undefined;
    if (!declared) return violation(`status ${status} is not declared (declared: ${Object.keys(operation.responses).join(', ')})`);
    const content = declared.content as Json | undefined;
    if (!content) {
      return body === undefined || body === '' ? [] : violation(`a body was sent, but status ${status} declares none`);
    }
    const mediaType = (contentType ?? '').split(';')[0]!.trim();
    if (!content[mediaType]) return violation(`content type ${mediaType || '(none)'} is not declared (declared: ${Object.keys(content).join(', ')})`);
    const ref = `openapi#/paths/${pointer(operation.template)}/${method.toLowerCase()}/responses/${status}/content/${pointer(mediaType)}/schema`;
    let validate = this.validators.get(ref);
    if (!validate) {
      validate = this.ajv.compile({ $ref: ref });
      this.validators.set(ref, validate);
    }
    if (validate(body)) return [];
    const errors = (validate.errors ?? []).slice(0, 8).map((error) => `${error.instancePath || '/'} ${error.message}`);
    return violation(`body does not match the schema: ${errors.join('; ')}`);
  }
}

const contracts = new Map<string, Promise<OpenApiContract>>();
const byDocument = new Map<string, OpenApiContract>();

/**
 * The contract of the gateway at `baseUrl`, fetched from its own /api/openapi.json once. Gateways
 * that serve the same document share one contract, and so the validators it compiled.
 */
export function contractOf(baseUrl: string): Promise<OpenApiContract> {
  let contract = contracts.get(baseUrl);
  if (!contract) {
    contract = fetch(`${baseUrl}/api/openapi.json`).then(async (res) => {
      const text = await res.text();
      if (res.status !== 200) throw new Error(`GET /api/openapi.json answered ${res.status}: ${text}`);
      let shared = byDocument.get(text);
      if (!shared) {
        shared = new OpenApiContract(JSON.parse(text) as Json);
        byDocument.set(text, shared);
      }
      return shared;
    });
    contracts.set(baseUrl, contract);
  }
  return contract;
}

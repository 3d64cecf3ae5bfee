import type { TestApp } from './app.js';
import { contractOf } from '../support/openapi-contract.js';

/**
 * A validator for one operation's answer against the served OpenAPI document: [] when the body
 * is as documented, else what is wrong. (Every RestClient answer is checked this way already; this
 * is for a test that asserts on the check itself.)
 */
export async function responseValidator(app: TestApp, path: string, method: string, status = 200) {
  const contract = await contractOf(app.baseUrl);
  return (value: unknown) => contract.check(method, path, status, 'application/json', value).map((violation) => violation.problem);
}

import { Ajv } from 'ajv';
import type { TestApp } from './app.js';

/**
 * A validator for the success body of one operation of the served OpenAPI document.
 * Formats are not checked (ajv-formats is not installed); types, required fields and extra fields are.
 */
export async function responseValidator(app: TestApp, path: string, method: string, status = 200) {
  const { body: doc } = await app.rest().get('/api/openapi.json');
  const ajv = new Ajv({ strict: false, validateFormats: false, allErrors: true });
  ajv.addSchema(doc, 'openapi');
  const pointer = ['paths', path, method, 'responses', String(status), 'content', 'application/json', 'schema']
    .map((part) => part.replaceAll('~', '~0').replaceAll('/', '~1'))
    .join('/');
  const validate = ajv.compile({ $ref: `openapi#/${pointer}` });
  return (value: unknown) => (validate(value) ? [] : (validate.errors ?? []).map((error) => `${error.instancePath} ${error.message}`));
}

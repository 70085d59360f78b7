// The recall response's JSON Schema (schema/recall-response.json) compiled with ajv, the golden
// responses, and responses it must refuse; shared by contracts.test.js, mcp.test.js and the
// worker's tests/worker/*.test.mjs.
import { readFileSync } from 'node:fs';
import Ajv2020 from 'ajv/dist/2020.js';

const read = (rel) => JSON.parse(readFileSync(new URL(rel, import.meta.url), 'utf8'));

export const recallSchema = read('../../schema/recall-response.json');
/** [{name, request, rows, tookMs, timings?, response}] */
export const goldenCases = read('../../tests/golden/recall-response.json');

const ajv = new Ajv2020({ allErrors: true, strict: true });
const validate = ajv.compile(recallSchema);

/** The schema's complaints about `response` ([] when it conforms). */
export function validateRecall(response) {
  return validate(response) ? [] : validate.errors.map((e) => `${e.instancePath || '/'} ${e.message}`);
}

/** `schema` (e.g. a tools/list outputSchema) compiled with ajv's draft-07 or 2020-12 class. */
export async function compile(schema) {
  if (String(schema.$schema ?? '').includes('draft-07')) {
    const { default: Ajv } = await import('ajv');
    return new Ajv({ allErrors: true, strict: false }).compile(schema);
  }
  return new Ajv2020({ allErrors: true, strict: false }).compile(schema);
}

/** [what, response] pairs that no door may answer: the schema must refuse each. */
export function brokenResponses() {
  const explained = goldenCases.find((c) => c.request.explain).response;
  const edit = (what, f) => {
    const r = structuredClone(explained);
    f(r);
    return [what, r];
  };
  return [
    edit('a hit without ranks', (r) => delete r.results[0].ranks),
    edit('a string score', (r) => (r.results[0].rrfScore = '0.05')),
    edit('an unknown kind', (r) => (r.results[0].kind = 'file')),
    edit('a rank of 0', (r) => (r.results[0].ranks.vector = 0)),
    edit('the old contributions field', (r) => (r.results[0].contributions = { vector: 0.1, keyword: 0, entity: 0 })),
    edit('a term without its weight', (r) => delete r.results[0].explain.terms.vector.weight),
    edit('explain without the embedder', (r) => delete r.explain.embedder),
    edit('no tookMs', (r) => delete r.tookMs),
  ];
}

#!/usr/bin/env node
// Rebuilds the parts of the edge worker's openapi.json that have a definition elsewhere: the
// recall response's components from schema/recall-response.json (the schema's root becomes
// `RecallResponse`, each of its $defs `Recall<Name>`, refs rewritten to #/components/schemas/...),
// and the request schemas' bounds from schema/limits.json (RecallRequest's query length, limit
// default and maximum, weight maximum; MemoryRequest's text and key lengths). The rest (paths,
// descriptions) is left as it is. Run it after editing either file, then review the diff:
//   node scripts/gen-openapi.mjs
// crates/edge-worker/src/contracts.rs (cargo test -p edge-worker) fails while they differ.
import { readFileSync, writeFileSync } from 'node:fs';

const root = new URL('..', import.meta.url);
const openapiFile = new URL('crates/edge-worker/openapi.json', root);
const schema = JSON.parse(readFileSync(new URL('schema/recall-response.json', root), 'utf8'));
const openapi = JSON.parse(readFileSync(openapiFile, 'utf8'));

const name = (def) => `Recall${def[0].toUpperCase()}${def.slice(1)}`;
const rewrite = (v) => {
  if (Array.isArray(v)) return v.map(rewrite);
  if (v === null || typeof v !== 'object') return v;
  return Object.fromEntries(
    Object.entries(v).map(([k, x]) =>
      k === '$ref' && typeof x === 'string' && x.startsWith('#/$defs/') ? [k, `#/components/schemas/${name(x.slice('#/$defs/'.length))}`] : [k, rewrite(x)],
    ),
  );
};
const { $schema, $defs, ...top } = schema;
const built = { RecallResponse: rewrite(top), ...Object.fromEntries(Object.entries($defs).map(([d, s]) => [name(d), rewrite(s)])) };
const schemas = openapi.components.schemas;
const kept = Object.entries(schemas).filter(([k]) => !k.startsWith('Recall') || k === 'RecallRequest');
openapi.components.schemas = { ...Object.fromEntries(kept), ...built };

const limits = JSON.parse(readFileSync(new URL('schema/limits.json', root), 'utf8'));
const recallReq = openapi.components.schemas.RecallRequest.properties;
recallReq.query.maxLength = limits.maxQueryChars.value;
recallReq.limit.maximum = limits.maxLimit.value;
recallReq.limit.default = limits.defaultLimit.value;
for (const w of Object.values(recallReq.weights.properties)) w.maximum = limits.maxWeight.value;
const memoryReq = openapi.components.schemas.MemoryRequest.properties;
memoryReq.text.maxLength = limits.maxMemoryBytes.value;
memoryReq.key.maxLength = limits.maxKeyChars.value;
writeFileSync(openapiFile, JSON.stringify(openapi, null, 2) + '\n');
console.log(`gen-openapi: ${Object.keys(built).length} recall components and the request limits written to crates/edge-worker/openapi.json`);

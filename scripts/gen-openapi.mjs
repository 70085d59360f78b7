#!/usr/bin/env node
// Rebuilds the recall response's components of the edge worker's openapi.json from its one
// definition, schema/recall-response.json: the schema's root becomes `RecallResponse`, each of its
// $defs `Recall<Name>` (refs rewritten to #/components/schemas/...); the other components and
// the paths are left as they are. Run it after editing the schema, then review the diff:
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
writeFileSync(openapiFile, JSON.stringify(openapi, null, 2) + '\n');
console.log(`gen-openapi: ${Object.keys(built).length} recall components written to crates/edge-worker/openapi.json`);

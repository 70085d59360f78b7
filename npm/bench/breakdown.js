// Where a memloom recall's milliseconds go, for the recall benches in Node (recall.js) and in
// Chromium (browser-recall.js, bundled into the page): the query embedding, a bare round trip,
// memloom_fuse's fixed part, each arm's function alone (as memloom_fuse calls it), the fusion with
// the rows' fetch, and memloom_fuse with one arm and with all three. Only the store's own API and
// SQL: no Node module, so the page can import it too.

/**
 * The steps to time, as functions of a query, over `queries` (each step's inputs, such as the
 * query's vector and the vector arm's ids, computed once here, untimed).
 * @param {any} store an open memloom store
 * @param {string[]} queries
 * @returns {Promise<Record<string, (q: string) => Promise<unknown>>>}
 */
export async function breakdownParts(store, queries) {
  const ns = store.namespace;
  // The arms called directly run with memloom_fuse's pinned search_path, as inside the call: a
  // plan cached under one search_path is made again under another, so calls alternating between
  // the session's path and memloom_fuse's re-planned the arms every time (sql/0031's cached plans).
  await store.db.query(
    `SELECT set_config('search_path', substr(c, length('search_path=') + 1), false)
     FROM pg_proc p, unnest(p.proconfig) AS c WHERE p.proname = 'memloom_fuse' AND c LIKE 'search_path=%'`,
  );
  const ctx = new Map();
  for (const q of queries) {
    const [v] = await store._embed([q]);
    const ids = async (sql, params) => (await store.db.query(sql, params)).rows[0].ids;
    const vids = await ids('SELECT array_agg(a.id ORDER BY a.distance, a.id) AS ids FROM memloom_vector_arm($1::vector, $2, 10, NULL) a', [v, ns]);
    const kids = await ids('SELECT array_agg(a.id ORDER BY a.score DESC, a.id) AS ids FROM memloom_keyword_arm($1, $2, 10, NULL, 1000, $3::bigint[]) a', [q, ns, vids]);
    const eids = await ids('SELECT array_agg(a.id ORDER BY a.score DESC, a.id) AS ids FROM memloom_entity_arm($1::vector, $2, 10, 0.6, NULL) a', [v, ns]);
    ctx.set(q, { v, vids, kids, eids });
  }
  return {
    [`embed query (${store.embedder.id}, wasm)`]: async (q) => store._embed([q]),
    'a trivial query (SELECT 1 round trip)': async () => store.db.query('SELECT 1'),
    'memloom_fuse, no arm (the call and its checks)': async (q) => store.db.query(`SELECT * FROM memloom_fuse($1, $2::vector, $3, 10, arms => '{}'::text[])`, [q, ctx.get(q).v, ns]),
    'memloom_vector_arm alone': async (q) => store.db.query('SELECT count(*) FROM memloom_vector_arm($1::vector, $2, 10, NULL)', [ctx.get(q).v, ns]),
    'memloom_keyword_arm alone (the vector ids as boost ids)': async (q) => store.db.query('SELECT count(*) FROM memloom_keyword_arm($1, $2, 10, NULL, 1000, $3::bigint[])', [q, ns, ctx.get(q).vids]),
    'memloom_entity_arm alone': async (q) => store.db.query('SELECT count(*) FROM memloom_entity_arm($1::vector, $2, 10, 0.6, NULL)', [ctx.get(q).v, ns]),
    'fusion and the rows (memloom_rrf JOIN memloom_items)': async (q) => {
      const c = ctx.get(q);
      return store.db.query(
        `SELECT m.id, m.kind, m.source, m.breadcrumb, m.key, m.content, f.rrf_score, 1 - (m.embedding <=> $4::vector) AS similarity,
                f.vector_rank, f.keyword_rank, f.entity_rank
         FROM memloom_rrf($1::bigint[], $2::bigint[], $3::bigint[], 60, 1.0, 2.0, 0.5) f JOIN memloom_items m ON m.id = f.id
         ORDER BY f.rrf_score DESC, f.id LIMIT 10`,
        [c.vids, c.kids, c.eids, c.v],
      );
    },
    'memloom_fuse, vector arm only': async (q) => store.recall(q, { arms: ['vector'] }),
    'memloom_fuse, keyword arm only': async (q) => store.recall(q, { arms: ['keyword'] }),
    'memloom_fuse, entity arm only': async (q) => store.recall(q, { arms: ['entity'] }),
    'memloom_fuse, all arms (recall)': async (q) => store.recall(q),
  };
}

/**
 * Times `fns` over `queries`: one untimed pass of each (JIT, PGlite's wasm tiers), then `passes`
 * passes, the order of the functions rotating per query so that none always runs after the same
 * one. Returns each function's times in ms, in (pass, query) order, so that the i-th times of
 * two functions are a pair.
 * @param {Record<string, (q: string) => Promise<unknown>>} fns
 * @param {string[]} queries
 * @param {number} passes
 */
export async function interleaved(fns, queries, passes) {
  const names = Object.keys(fns);
  for (const q of queries) for (const n of names) await fns[n](q);
  /** @type {Record<string, number[]>} */
  const times = Object.fromEntries(names.map((n) => [n, []]));
  let turn = 0;
  for (let p = 0; p < passes; p++) {
    for (const q of queries) {
      const order = names.map((_, i) => names[(i + turn) % names.length]);
      turn++;
      for (const n of order) {
        const t = performance.now();
        await fns[n](q);
        times[n].push(performance.now() - t);
      }
    }
  }
  return times;
}

/** The p-th percentile of xs (nearest rank). @param {number[]} xs @param {number} p */
export function pct(xs, p) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}

/** The breakdown's markdown table. @param {Record<string, number[]>} times */
export function breakdownTable(times) {
  const lines = ['| step (in-process, p50 over queries x passes) | p50 ms | p95 ms |', '| --- | ---: | ---: |'];
  for (const [n, ts] of Object.entries(times)) lines.push(`| ${n} | ${pct(ts, 50).toFixed(2)} | ${pct(ts, 95).toFixed(2)} |`);
  return lines.join('\n');
}

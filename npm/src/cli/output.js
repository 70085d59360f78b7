// Where the CLI writes: data to stdout, diagnostics and progress to stderr (--quiet silences the
// diagnostics, never warnings or errors), and what the vector arm of a store can match. In the
// warm process (warm-server.js) a sink collects both for the CLI that sent the command.

/** @type {{ out(s: string): void, err(s: string): void } | null} */
let sink = null;

/** Sends out/err (and commander's help) to `s` instead of stdout/stderr; null: back. @param {typeof sink} s */
export function setSink(s) {
  sink = s;
}

/** Raw text to stdout. @param {string} s */
export const writeOut = (s) => void (sink ? sink.out(s) : process.stdout.write(s));
/** Raw text to stderr. @param {string} s */
export const writeErr = (s) => void (sink ? sink.err(s) : process.stderr.write(s));
/** @param {string} s */
export const out = (s) => writeOut(s + '\n');
/** @param {string} s */
export const err = (s) => writeErr(s + '\n');

/**
 * What the vector arm can and cannot match with a store's embedder (stats, recall --explain;
 * the MCP recall tool's description says the same for every embedder).
 * @param {{ name: string, version: number }} e  the embedder as stats() reports it
 */
export function vectorArmNote(e) {
  const id = `${e.name}-v${e.version}`;
  if (e.name === 'hash') {
    return `${id} (offline) matches shared words, word pieces and identifiers only, not meaning: a paraphrase that shares no word with the text is missed; for meaning, build a store with --embedder static-v2 (offline, some meaning) or set an embeddings API (embedder.url)`;
  }
  if (e.name === 'static') {
    return `${id} (offline) adds some meaning distilled from all-MiniLM-L6-v2 (related words, short paraphrases) to hash-v1's shared words; weaker than the model itself`;
  }
  return `${e.name} (an embeddings API) matches by the model's meaning, as well as the model does`;
}

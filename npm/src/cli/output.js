// Where the CLI writes: data to stdout, diagnostics and progress to stderr (--quiet silences the
// diagnostics, never warnings or errors), and what the vector arm of a store can match.

/** @param {string} s */
export const out = (s) => void process.stdout.write(s + '\n');
/** @param {string} s */
export const err = (s) => void process.stderr.write(s + '\n');

/**
 * What the vector arm can and cannot match with a store's embedder (stats, recall --explain;
 * the MCP recall tool's description says the same for every embedder).
 * @param {{ name: string, version: number }} e  the embedder as stats() reports it
 */
export function vectorArmNote(e) {
  const id = `${e.name}-v${e.version}`;
  if (e.name === 'hash') {
    return `${id} (offline) matches shared words, word pieces and identifiers only, not meaning: a paraphrase that shares no word with the text is missed; set an embeddings API (embedder.url) for meaning`;
  }
  if (e.name === 'static') {
    return `${id} (offline) adds some meaning distilled from all-MiniLM-L6-v2 (related words, short paraphrases) to hash-v1's shared words; weaker than the model itself`;
  }
  return `${e.name} (an embeddings API) matches by the model's meaning, as well as the model does`;
}

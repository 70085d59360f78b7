// Optional dependencies (peerDependencies marked optional in package.json): a library import
// of memloom does not install them; the feature that needs one loads it on first use and, when
// it is missing, says which package to install.
import { MemloomError } from './errors.js';

/**
 * Imports `name` (an optional peer dependency) for `feature`, or throws a MemloomError that
 * names the package to install.
 * @param {string} name
 * @param {string} feature
 * @returns {Promise<any>}
 */
export async function importOptional(name, feature) {
  try {
    return await import(name);
  } catch (e) {
    if (isMissing(e, name)) {
      throw new MemloomError(`${feature} needs the package ${name}, which is not installed; run: npm install ${name}`, { cause: e });
    }
    throw e;
  }
}

/** Whether `e` says that `name` itself (not something it imports) cannot be found. */
function isMissing(e, name) {
  if (e?.code !== 'ERR_MODULE_NOT_FOUND' && e?.code !== 'MODULE_NOT_FOUND') return false;
  const root = name.startsWith('@') ? name.split('/').slice(0, 2).join('/') : name.split('/')[0];
  return String(e.message).includes(`'${root}'`) || String(e.message).includes(`'${name}'`);
}

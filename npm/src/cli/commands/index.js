// Every command, in the order `memloom --help` lists them. Add a command: write its module
// (a CommandSpec, spec.js) and add it here.
import init from './init.js';
import ingest from './ingest.js';
import remember from './remember.js';
import recall from './recall.js';
import forget from './forget.js';
import history from './history.js';
import index from './index-cmd.js';
import stats from './stats.js';
import exportCmd from './export.js';
import importCmd from './import.js';
import evalCmd from './eval.js';
import config from './config.js';
import mcp from './mcp.js';
import daemon from './daemon.js';
import completion from './completion.js';

/** @type {import('../spec.js').CommandSpec[]} */
export const COMMANDS = [init, ingest, remember, recall, forget, history, index, stats, exportCmd, importCmd, evalCmd, config, mcp, daemon, completion];

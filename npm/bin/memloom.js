#!/usr/bin/env node
// The memloom CLI (src/cli/main.js; one module per command in src/cli/commands/).
import { main } from '../src/cli/main.js';

main(process.argv.slice(2));

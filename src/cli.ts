#!/usr/bin/env node
import { applyFootprintFlags } from './base/v8-flags.js';

/**
 * The entry point. V8's settings for `serve` are made before anything else is loaded (v8-flags.ts); the argument
 * parser and everything a command needs are loaded with the command.
 */
applyFootprintFlags(process.argv.slice(2));
await (await import('./cli-main.js')).run();

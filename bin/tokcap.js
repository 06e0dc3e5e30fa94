#!/usr/bin/env node
// Thin launcher: all behaviour lives in commands/run.ts (compiled to dist/ by `npm run build`).
import { run } from '../dist/commands/run.js';

process.exitCode = await run(process.argv);

#!/usr/bin/env node
// Thin launcher: all behaviour lives in commands/ (compiled to dist/ by `npm run build`).
import { main } from '../dist/commands/main.js';

process.exitCode = await main(process.argv);

// Preloaded with `node --import` into a child tokcap: on exit, writes the process's peak RSS
// (process.resourceUsage().maxRSS, in KiB) to the file named by TOKCAP_MAX_RSS_FILE.
import { writeFileSync } from 'node:fs';

const file = process.env.TOKCAP_MAX_RSS_FILE;
if (file) {
  process.on('exit', () => {
    writeFileSync(file, String(process.resourceUsage().maxRSS));
  });
}

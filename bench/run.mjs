#!/usr/bin/env node
// npm run bench: generates (or reuses, cached under .bench/) stores of a few sizes, then times
// every tokcap command as a whole process (bin/tokcap.js, built) next to the floors on the same
// bytes: `cat <jsonl files> | sha256sum` and bench/floor-scan.mjs (scan lines, JSON.parse,
// SHA-256). Prints a table of medians, ratios and peak RSS, and writes it into BENCHMARKS.md
// between its `<!-- generated:start -->` and `<!-- generated:end -->` markers (the hand-written
// method, targets and measurements around them are kept). Timings are printed, never asserted.
//
// Environment: BENCH_REPS (default 3), BENCH_ONLY (comma list of store names), BENCH_SKIP_100K=1,
// BENCH_BIG=1 (adds a ~2 GB store for the RSS-vs-size check), BENCH_NO_WRITE=1 (do not touch
// BENCHMARKS.md), BENCH_DIR (cache directory, default .bench/).
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, freemem, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WATCH_STORES, watchJobs, watchTable } from './watch-bench.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const BIN = join(ROOT, 'bin', 'tokcap.js');
const FLOOR = join(ROOT, 'bench', 'floor-scan.mjs');
const FLOOR_DIGESTS = join(ROOT, 'bench', 'floor-digests.mjs');
const LOCKED_COPIES = join(ROOT, 'bench', 'locked-copies.mjs');
const FLOOR_FREEZE = join(ROOT, 'bench', 'floor-freeze.mjs');
const CACHE = resolve(process.env.BENCH_DIR ?? join(ROOT, '.bench'));
const REPS = Number(process.env.BENCH_REPS ?? 3);
const TIME = existsSync('/usr/bin/time') ? '/usr/bin/time' : undefined;

/** name, fixture arguments, which commands run on it. */
const STORES = [
  {
    name: 'mix-2k',
    args: [
      '--rollouts',
      '2000',
      '--calls',
      '6',
      '--prompt',
      '300',
      '--gen',
      '60',
      '--turn',
      '80',
      '--mix',
      '--seed',
      '7',
    ],
    what: 'all',
  },
  {
    name: 'full-200x12',
    args: ['--rollouts', '200', '--calls', '12'],
    what: 'all',
    sideBySide: true,
    note: 'first prompt 1,000 tokens, +200 generated, +300 per turn (the build target store)',
  },
  // Many small rollouts: each command's ratio to `cat DIR/* | sha256sum`.
  {
    name: 'small-5k',
    args: ['--rollouts', '5000', '--calls', '2', '--prompt', '300', '--gen', '60', '--turn', '80'],
    what: 'small',
    note: 'many small rollouts',
  },
  { name: 'delta-200x12', args: ['--rollouts', '200', '--calls', '12', '--delta'], what: 'all' },
  { name: 'full-800x12', args: ['--rollouts', '800', '--calls', '12', '--seed', '3'], what: 'rss' },
  ...(process.env.BENCH_BIG
    ? [{ name: 'full-6000x12', args: ['--rollouts', '6000', '--calls', '12', '--seed', '4'], what: 'rss' }]
    : []),
  ...(process.env.BENCH_SKIP_100K
    ? []
    : [
        {
          name: 'small-100k',
          args: ['--rollouts', '100000', '--calls', '1', '--prompt', '8', '--gen', '2', '--turn', '0', '--prefix', 'x'],
          what: 'inspect',
        },
      ]),
  // `watch` on many small rollouts (bench/watch-bench.mjs).
  ...WATCH_STORES,
].filter((s) => !process.env.BENCH_ONLY || process.env.BENCH_ONLY.split(',').includes(s.name));

function sh(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 1 << 30, ...opts });
  if (r.error) throw r.error;
  return r;
}

function ensureStore(store) {
  const dir = join(CACHE, store.name);
  const stamp = join(CACHE, `${store.name}.args`);
  const want = JSON.stringify(store.args);
  if (existsSync(dir) && existsSync(stamp) && readFileSync(stamp, 'utf8') === want) return dir;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(CACHE, { recursive: true });
  process.stderr.write(`generating ${store.name} ...\n`);
  const t0 = performance.now();
  const r = sh(process.execPath, [BIN, 'fixture', dir, ...store.args, '--quiet'], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (r.status !== 0) throw new Error(`fixture ${store.name} failed`);
  writeFileSync(stamp, want);
  process.stderr.write(`  ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
  return dir;
}

function dirStats(dir) {
  let bytes = 0;
  let jsonl = 0;
  const files = [];
  for (const f of readdirSync(dir)) {
    const size = statSync(join(dir, f)).size;
    bytes += size;
    if (f.endsWith('.tokens.jsonl')) {
      jsonl += size;
      files.push(join(dir, f));
    }
  }
  return { bytes, jsonl, files: files.sort() };
}

/**
 * Runs once; returns { ms, cpuMs, rssKb, status }: wall time, CPU time (user + system, all
 * threads and children) and peak RSS.
 */
function timeOnce(argv, { shell = false, figures = false } = {}) {
  const statFile = join(CACHE, '.rss');
  const cmd = shell ? ['sh', '-c', argv] : argv;
  const full = TIME ? [TIME, '-f', '%U %S %M', '-o', statFile, ...cmd] : cmd;
  const t0 = performance.now();
  const r = spawnSync(full[0], full.slice(1), {
    stdio: ['ignore', figures ? 'pipe' : 'ignore', 'pipe'],
    encoding: 'utf8',
    maxBuffer: 1 << 28,
  });
  const ms = performance.now() - t0;
  let rssKb;
  let cpuMs;
  if (TIME) {
    try {
      const [user, sys, rss] = readFileSync(statFile, 'utf8').trim().split('\n').pop().split(' ').map(Number);
      rssKb = rss;
      cpuMs = (user + sys) * 1000;
    } catch {
      rssKb = undefined;
    }
  }
  // A job that measures something inside its run prints its figures as one JSON line.
  const measured = figures && r.status === 0 ? JSON.parse(r.stdout.trim().split('\n').pop()) : undefined;
  return { ms, cpuMs, rssKb, status: r.status, stderr: r.stderr, figures: measured };
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

/**
 * Times every job of a store REPS times, in rounds (each round runs every job once, floors
 * included), so that the load of a shared machine weighs on the floors and the commands alike,
 * after one untimed read of the whole store.
 * A job: { label, argv, shell?, setup?(i) -> argv (untimed), okStatus? }.
 */
function measureAll(jobs, dir) {
  // Untimed: every file of the store read once, so that no round pays for a cold page, inode or
  // dentry cache (a 2 GB store read before evicts a 100,000-file store's inodes: 10 s instead of 2.7).
  sh('sh', ['-c', 'find "$1" -type f -print0 | xargs -0 cat > /dev/null', 'warm', dir]);
  const runs = jobs.map(() => []);
  for (let i = 0; i < REPS; i++) {
    jobs.forEach((job, j) => {
      const argv = job.setup ? (job.workers ? withWorkers(job.setup(i)) : job.setup(i)) : job.argv;
      const r = timeOnce(argv, { shell: job.shell, figures: job.figures });
      if (!(job.okStatus ?? [0, 1]).includes(r.status)) {
        process.stderr.write(`${job.label}: exit ${r.status}\n${r.stderr}\n`);
      }
      runs[j].push(r);
    });
  }
  return jobs.map((job, j) => ({
    label: job.label,
    ms: median(runs[j].map((r) => r.ms)),
    cpuMs: runs[j].every((r) => r.cpuMs !== undefined) ? median(runs[j].map((r) => r.cpuMs)) : undefined,
    rssKb: Math.max(...runs[j].map((r) => r.rssKb ?? 0)) || undefined,
    figures: job.figures ? medianFigures(runs[j].map((r) => r.figures).filter(Boolean)) : undefined,
  }));
}

/** Each figure's median over the runs (peak RSS: the largest). */
function medianFigures(list) {
  const out = {};
  for (const k of new Set(list.flatMap((f) => Object.keys(f)))) {
    const xs = list.map((f) => f[k]).filter((x) => typeof x === 'number');
    out[k] = xs.length === 0 ? null : k === 'rssKb' ? Math.max(...xs) : median(xs);
  }
  return out;
}

const tokcap = (...args) => [process.execPath, BIN, ...args];

/**
 * Whether verify-digests and the build preview print the same bytes with a worker thread
 * (`TOKCAP_WORKERS=2`) as in one thread (`TOKCAP_WORKERS=1`): { verify, build } booleans.
 */
function sameAsOneThread(dir) {
  const digest = (workers, args) => {
    const r = spawnSync(process.execPath, [BIN, ...args], {
      env: { ...process.env, TOKCAP_WORKERS: String(workers) },
      maxBuffer: 1 << 30,
    });
    return createHash('sha256').update(r.stdout).digest('hex') + ` exit ${r.status}`;
  };
  const same = (args) => digest(1, args) === digest(2, args);
  return { verify: same(['verify-digests', dir, '--json']), build: same(['build', dir, '--json']) };
}
/** `argv` run with a worker thread whatever the job's size. */
const withWorkers = (argv) => ['env', 'TOKCAP_WORKERS=2', ...argv];

function hasCommand(name) {
  return sh(process.execPath, [BIN, name, '--help']).status === 0;
}

function machine() {
  const cpuinfo = existsSync('/proc/cpuinfo') ? readFileSync('/proc/cpuinfo', 'utf8') : '';
  const model = /model name\s*:\s*(.*)/.exec(cpuinfo)?.[1] ?? cpus()[0]?.model ?? 'unknown';
  const nproc = sh('nproc', []).stdout.trim() || String(cpus().length);
  const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  return {
    cpu: model,
    nproc,
    memory: `${(totalmem() / 2 ** 30).toFixed(1)} GiB (${(freemem() / 2 ** 30).toFixed(1)} GiB free)`,
    node: process.version,
    sha256sum: sh('sha256sum', ['--version']).stdout.split('\n')[0],
    load,
    date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    commit: sh('git', ['-C', ROOT, 'rev-parse', '--short', 'HEAD']).stdout.trim() || 'unknown',
  };
}

const fmtMs = (ms) => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(0)} ms`);
const fmtMb = (kb) => (kb === undefined ? '–' : `${(kb / 1024).toFixed(0)} MB`);
const fmtSize = (b) => (b >= 2 ** 30 ? `${(b / 2 ** 30).toFixed(2)} GB` : `${(b / 2 ** 20).toFixed(1)} MB`);

// ---------------------------------------------------------------------------------------------

if (!existsSync(join(ROOT, 'dist', 'commands', 'cli', 'run.js'))) {
  console.error('bench: build first (npm run build)');
  process.exit(2);
}
mkdirSync(CACHE, { recursive: true });
const info = machine();
const exportAvailable = hasCommand('export');
// The Parquet dataset beside the jsonl export of the same store, 2 GB one included.
const parquetAvailable = exportAvailable && sh(process.execPath, [BIN, 'export', '--help']).stdout.includes('parquet');
const sections = [];

for (const store of STORES) {
  const dir = ensureStore(store);
  const st = dirStats(dir);
  const jobs = [];
  process.stderr.write(`benchmarking ${store.name} (${fmtSize(st.bytes)}, ${st.files.length} JSONL files) ...\n`);
  const listFile = join(CACHE, `${store.name}.files`);
  writeFileSync(listFile, st.files.map((f) => f + '\0').join(''));
  const floors = store.what !== 'inspect' && store.what !== 'watch';
  if (floors) {
    jobs.push({ label: 'floor: cat \\| sha256sum', argv: `xargs -0 cat < '${listFile}' | sha256sum`, shell: true });
    // Every file of the store, side files and lock files included (the floor for many small rollouts).
    if (store.what === 'small')
      jobs.push({ label: 'floor: cat DIR/* \\| sha256sum', argv: `cat '${dir}'/* | sha256sum`, shell: true });
    jobs.push({
      label: 'floor: node scan+parse+hash',
      argv: `xargs -0 ${process.execPath} ${FLOOR} < '${listFile}'`,
      shell: true,
    });
    // Not a target's floor: the node floor plus the token digests verify cannot skip.
    jobs.push({
      label: '(floor + token digests)',
      argv: `xargs -0 ${process.execPath} ${FLOOR_DIGESTS} < '${listFile}'`,
      shell: true,
    });
    // Nor this: tokcap's locked copies of every rollout (docs/format.md#locking), before any parsing.
    jobs.push({ label: '(locked copies only)', argv: [process.execPath, LOCKED_COPIES, dir] });
  }
  const add = (label, argv, opts = {}) => jobs.push({ label, argv, ...opts });
  const copy = join(CACHE, `${store.name}.copy`);
  /** A job that writes the store: each run gets a fresh copy (untimed). */
  const onCopy = (argv) => ({
    setup: () => {
      rmSync(copy, { recursive: true, force: true });
      cpSync(dir, copy, { recursive: true });
      return argv(copy);
    },
  });
  // Nor this: the node floor plus the lock and durable state write a first freeze must make per
  // rollout (docs/format.md#freeze); the floor beside `build --all --freeze`.
  if (floors && store.what === 'all')
    jobs.push({ label: '(floor + freeze writes)', ...onCopy((c) => [process.execPath, FLOOR_FREEZE, c]) });
  const out = join(CACHE, `${store.name}.export.jsonl`);
  const dataset = join(CACHE, `${store.name}.export.parquet`);
  if (store.what === 'watch') {
    jobs.push(...watchJobs(dir, tokcap));
  } else if (store.what === 'inspect') {
    add('inspect (summary)', tokcap('inspect', dir, '--json'));
  } else if (store.what === 'small') {
    add('verify-digests', tokcap('verify-digests', dir, '--json'));
    add('inspect (summary)', tokcap('inspect', dir, '--json'));
    add('inspect --deep', tokcap('inspect', dir, '--deep', '--json'));
    add('build (preview, all)', tokcap('build', dir, '--json'));
    add('watch --once --json', tokcap('watch', dir, '--once', '--json'));
    // Whether a worker pays at this size (by default none starts below ~96 MB of JSONL).
    add('verify-digests, TOKCAP_WORKERS=2', withWorkers(tokcap('verify-digests', dir, '--json')));
    add('build (preview, all), TOKCAP_WORKERS=2', withWorkers(tokcap('build', dir, '--json')));
  } else {
    add('verify-digests', tokcap('verify-digests', dir, '--json'));
    add('inspect (summary)', tokcap('inspect', dir, '--json'));
    if (store.what === 'all') {
      add('inspect --deep', tokcap('inspect', dir, '--deep', '--json'));
      add('build (preview, all)', tokcap('build', dir, '--json'));
      // --mix stores hold retired rollouts: their builds fail as in the reference (exit 3).
      const freezeCopy = (...flags) => ({
        ...onCopy((c) => tokcap('build', c, '--all', '--freeze', ...flags)),
        okStatus: [0, 1, 3],
      });
      add('build --all --freeze (copy)', null, freezeCopy('--json'));
      // The reference consumer's job with a text summary instead of the results.
      if (store.sideBySide) {
        add('build --all --freeze, text (copy)', null, freezeCopy());
        // Whether a worker pays at this size (by default none starts below ~96 MB of JSONL).
        add('verify-digests, TOKCAP_WORKERS=2', withWorkers(tokcap('verify-digests', dir, '--json')));
        add('build (preview, all), TOKCAP_WORKERS=2', withWorkers(tokcap('build', dir, '--json')));
        add('build --all --freeze (copy), TOKCAP_WORKERS=2', null, { ...freezeCopy('--json'), workers: true });
      }
      add('sweep --dry-run', tokcap('sweep', dir, '--older-than', '0s', '--dry-run', '--json'));
    } else {
      // Large stores: the deep scan's memory, and the build's ratio where workers pay.
      add('inspect --deep', tokcap('inspect', dir, '--deep', '--json'));
      add('build (preview, all)', tokcap('build', dir, '--json'));
    }
    if (exportAvailable)
      add('export --format jsonl', tokcap('export', dir, '--out', out, '--format', 'jsonl', '--force', '--json'));
    if (parquetAvailable)
      add(
        'export --format parquet',
        tokcap('export', dir, '--out', dataset, '--format', 'parquet', '--force', '--json'),
      );
  }
  const rows = measureAll(jobs, dir);
  rmSync(copy, { recursive: true, force: true });
  rmSync(out, { force: true });
  rmSync(dataset, { recursive: true, force: true });
  const sha = floors ? rows[0] : undefined;
  const node = floors ? rows.find((r) => r.label === 'floor: node scan+parse+hash') : undefined;
  const catAll = rows.find((r) => r.label.startsWith('floor: cat DIR/*'));
  // Outputs byte-identical to one thread (untimed; a worker whatever the size against none).
  const sameOutputs = store.sideBySide || store.what === 'small' ? sameAsOneThread(dir) : undefined;
  sections.push({ store, st, rows, node, sha, catAll, sameOutputs });
}

/**
 * The side-by-side table (full-200x12) and the targets, from this run's figures. The reference
 * consumer (Python, freeze + build of every rollout, results kept in memory) is not run here:
 * its time is taken as REFERENCE_X times this run's node floor, the ratio measured side by side
 * on one machine (3.69 s against a 0.61 s floor).
 */
const REFERENCE_X = 6.0;

function targetTables(sections) {
  const full = sections.find((s) => s.store.sideBySide);
  const small = sections.find((s) => s.store.what === 'small');
  const lines = [];
  if (!full && !small) return lines;
  const row = (sec, label) => sec?.rows.find((r) => r.label === label);
  const x = (a, b) => (a && b ? a.ms / b.ms : undefined);
  const fx = (v) => (v === undefined ? '–' : `${v.toFixed(2)}×`);
  const verdict = (v, limit) => (v === undefined ? '–' : v <= limit ? `met (${fx(v)})` : `**missed** (${fx(v)})`);
  lines.push('### Side by side, and the targets');
  lines.push('');
  if (full) {
    const { node, sha } = full;
    const ref = node ? node.ms * REFERENCE_X : undefined;
    const json = row(full, 'build --all --freeze (copy)');
    const text = row(full, 'build --all --freeze, text (copy)');
    const preview = row(full, 'build (preview, all)');
    const verify = row(full, 'verify-digests');
    const digests = row(full, '(floor + token digests)');
    const freezeFloor = row(full, '(floor + freeze writes)');
    lines.push(
      `${full.store.name}, medians of this run. "vs the reference": the reference consumer's time is not measured here; it is`,
    );
    lines.push(
      `taken as ${REFERENCE_X}× this run's node floor, the ratio measured side by side on one machine (3.69 s / 0.61 s).`,
    );
    lines.push('');
    lines.push('| whole process | time | vs the reference | vs node floor |');
    lines.push('|---|---:|---:|---:|');
    const line = (label, r, note = '') =>
      lines.push(
        `| ${label} | ${r ? fmtMs(r.ms) : '–'} | ${r && ref ? (r.ms / ref).toFixed(2) : '–'} | ${r && node ? `${(r.ms / node.ms).toFixed(2)}×` : '–'}${note} |`,
      );
    lines.push(
      `| reference: freeze + build every rollout (derived: ${REFERENCE_X}× node floor) | ${ref ? fmtMs(ref) : '–'} | 1 | ${REFERENCE_X.toFixed(1)}× |`,
    );
    const vsFreeze = (r) => (r && freezeFloor ? ` (${(r.ms / freezeFloor.ms).toFixed(2)}× floor + freeze writes)` : '');
    line('`tokcap build DIR --all --freeze --json > /dev/null`', json, vsFreeze(json));
    line('`tokcap build DIR --all --freeze` (text summary)', text, vsFreeze(text));
    line('`tokcap build DIR --json` (preview of every rollout)', preview);
    line(
      '`tokcap verify-digests DIR`',
      verify,
      verify && sha ? ` (${(verify.ms / sha.ms).toFixed(2)}× \`cat \\| sha256sum\`)` : '',
    );
    line('node floor (bench/floor-scan.mjs)', node);
    line('node floor + token digests (bench/floor-digests.mjs)', digests);
    line(
      'node floor + freeze writes (bench/floor-freeze.mjs: per rollout a lock and a durable state write)',
      freezeFloor,
    );
    lines.push('');
    lines.push('| target | this run |');
    lines.push('|---|---|');
    lines.push(`| \`build --all --freeze --json\` ≤ 1.5× node floor | ${verdict(x(json, node), 1.5)} |`);
    lines.push(`| \`build --all --freeze\`, text summary ≤ 1.2× node floor | ${verdict(x(text, node), 1.2)} |`);
    lines.push(`| build preview of every rollout ≤ 1.3× node floor | ${verdict(x(preview, node), 1.3)} |`);
    lines.push(`| verify-digests ≤ 1.6× \`cat \\| sha256sum\` | ${verdict(x(verify, sha), 1.6)} |`);
    lines.push(`| verify-digests ≤ 1.0× node floor + token digests | ${verdict(x(verify, digests), 1.0)} |`);
  }
  if (small) {
    if (!full) lines.push('| target | this run |', '|---|---|');
    for (const label of ['verify-digests', 'inspect --deep', 'build (preview, all)', 'watch --once --json']) {
      lines.push(
        `| ${small.store.name}: ${label} ≤ 3× \`cat DIR/* \\| sha256sum\` | ${verdict(x(row(small, label), small.catAll), 3)} |`,
      );
    }
  }
  // Peak RSS within the limit: <= 200 MB for verify-digests, inspect and both exports on the 2 GB
  // store.
  const big = sections.find((s) => s.store.name === 'full-6000x12');
  for (const label of ['verify-digests', 'inspect (summary)', 'export --format jsonl', 'export --format parquet']) {
    const r = row(big, label);
    const mb = r?.rssKb === undefined ? undefined : r.rssKb / 1024;
    const status =
      mb === undefined
        ? big
          ? '–'
          : '– (the 2 GB store runs with BENCH_BIG=1)'
        : mb <= 200
          ? `met (${mb.toFixed(0)} MB)`
          : `**missed** (${mb.toFixed(0)} MB)`;
    lines.push(`| peak RSS of ${label} on full-6000x12 (2 GB) ≤ 200 MB | ${status} |`);
  }
  for (const sec of [full, small].filter((s) => s?.sameOutputs)) {
    const { verify, build } = sec.sameOutputs;
    const said = (ok) => (ok ? 'met' : '**missed**');
    lines.push(
      `| ${sec.store.name}: verify-digests and build \`--json\` byte-identical with a worker and in one thread | verify ${said(verify)}, build ${said(build)} |`,
    );
  }
  lines.push('');
  return lines;
}

// ---------------------------------------------------------------------------------------------

const lines = [];
const out = (s = '') => lines.push(s);
out('## Latest generated run');
out();
out(
  `Written by \`npm run bench\` (bench/run.mjs): medians of ${REPS} runs in rounds, peak RSS of the largest run; the`,
);
out('method and the rows are described above. Do not edit between the markers: the next run replaces it.');
out();
out(`- date: ${info.date}; commit ${info.commit}`);
out(`- CPU: ${info.cpu}; nproc ${info.nproc}; load average at start ${info.load}`);
out(`- memory: ${info.memory}`);
out(`- node ${info.node}; ${info.sha256sum}`);
out(`- peak RSS from ${TIME ? '`/usr/bin/time -f %M`' : 'unavailable'}`);
out(`- export: ${exportAvailable ? 'benchmarked' : 'not present at the time of the run'}`);
out(
  `- export --format parquet: ${parquetAvailable ? 'benchmarked (a dataset of one part per table, zstd)' : 'not present at the time of the run'}`,
);
out();
for (const { store, st, rows, node, sha, catAll } of sections) {
  out(`### ${store.name}: \`tokcap fixture DIR ${store.args.join(' ')}\``);
  out();
  out(
    `${fmtSize(st.bytes)} on disk, ${fmtSize(st.jsonl)} of JSONL in ${st.files.length} files${store.note ? `; ${store.note}` : ''}.`,
  );
  out();
  if (store.what === 'watch') {
    for (const l of watchTable(rows)) out(l);
    out();
    continue;
  }
  out(
    `| command | median | × node floor | × sha256sum |${catAll ? ' × cat DIR/\\* |' : ''} CPU (user+sys) | peak RSS |`,
  );
  out(`|---|---:|---:|---:|${catAll ? '---:|' : ''}---:|---:|`);
  for (const r of rows) {
    const xn = node ? (r.ms / node.ms).toFixed(2) : '–';
    const xs = sha ? (r.ms / sha.ms).toFixed(2) : '–';
    const xc = catAll ? ` ${(r.ms / catAll.ms).toFixed(2)} |` : '';
    out(
      `| ${r.label} | ${fmtMs(r.ms)} | ${xn} | ${xs} |${xc} ${r.cpuMs === undefined ? '–' : fmtMs(r.cpuMs)} | ${fmtMb(r.rssKb)} |`,
    );
  }
  out();
  // The Parquet dataset against the jsonl export of the same store (the RSS limit is 200 MB).
  const jsonl = rows.find((r) => r.label === 'export --format jsonl');
  const parquet = rows.find((r) => r.label === 'export --format parquet');
  if (jsonl && parquet) {
    out(
      `\`export --format parquet\`: ${(parquet.ms / jsonl.ms).toFixed(2)}× the time of \`export --format jsonl\`, peak RSS ${fmtMb(parquet.rssKb)} (jsonl ${fmtMb(jsonl.rssKb)}; limit 200 MB).`,
    );
    out();
  }
}
for (const l of targetTables(sections)) out(l);
const text = lines.join('\n');
process.stdout.write(text + '\n');
if (!process.env.BENCH_NO_WRITE) {
  const target = join(ROOT, 'BENCHMARKS.md');
  // Only the part between the markers is generated: what is around it is kept as it is.
  const START = '<!-- generated:start -->';
  const END = '<!-- generated:end -->';
  const old = existsSync(target) ? readFileSync(target, 'utf8') : '';
  const [head, tail] =
    old.includes(START) && old.includes(END)
      ? [old.slice(0, old.indexOf(START)), old.slice(old.indexOf(END) + END.length)]
      : [old || '# Benchmarks\n\n', '\n'];
  writeFileSync(target, `${head}${START}\n${text}\n${END}${tail}`);
  process.stderr.write(`wrote ${target}\n`);
}

/**
 * The watch app: wires the hooks (model, watcher, terminal size, clock, rollout detail) to the
 * views and handles keys. It never touches the filesystem itself; every read goes through the
 * directory model or the detail loader it is given, asynchronously, so a key is handled at once
 * whatever the store is doing.
 *
 * The whole frame is `rows - 1` lines high: Ink clears the entire terminal on every frame whose
 * output is as tall as the terminal (visible flicker), and one line less avoids that path.
 */
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react';
import { Box, useApp, useInput } from 'ink';
import type { Styles } from '../render/styles.js';
import type { DirectoryModel } from '../../src/watch/directory-model.js';
import { visibleRows, VisibleRowsCache, type SortMode } from '../../src/watch/rows.js';
import { DirectoryView } from './DirectoryView.js';
import { viewHeights } from './list-header.js';
import { Footer } from './Footer.js';
import { Help } from './Help.js';
import { RolloutView, maxDetailOffset, rolloutViewLines } from './RolloutView.js';
import { useDirectoryModel } from './hooks/use-directory-model.js';
import { useDirectoryWatcher, type DirectoryWatcherOptions } from './hooks/use-directory-watcher.js';
import { useNow } from './hooks/use-now.js';
import { useRolloutDetail, type DetailLoader } from './hooks/use-rollout-detail.js';
import { useTerminalSize, type SizedStream } from './hooks/use-terminal-size.js';
import { initialUi, reduceKey, splitKeys, type KeyContext, type UiState } from './keys.js';
import { selectedIndex, visibleOffset } from './navigation.js';
import type { Trace } from './trace.js';

export interface WatchAppProps {
  model: DirectoryModel;
  styles: Styles;
  /** Loads a rollout's detail (default: the library's read-only loader on the model's store). */
  loadDetail?: DetailLoader;
  watcher?: DirectoryWatcherOptions;
  /** Wall clock for ages and highlights (default Date.now). */
  clock?: () => number;
  /** Where the size comes from (default Ink's stdout). */
  sizeStream?: SizedStream;
  /** Minimum time between two snapshots of the model handed to the view (default 100 ms). */
  throttleMs?: number;
  initialScan?: boolean;
  initialSort?: SortMode;
  /** TOKCAP_TRACE (./trace.ts): told of the first frames with rows listed and with the visible rows read. */
  trace?: Trace;
}

export function WatchApp(props: WatchAppProps) {
  const { model, styles } = props;
  const { exit } = useApp();
  const size = useTerminalSize(props.sizeStream);
  const handle = useDirectoryModel(model, {
    throttleMs: props.throttleMs,
    initialScan: props.initialScan,
    trace: props.trace,
  });
  // The model is the watcher's target: it re-reads named rollouts and rescans (its own queue).
  useDirectoryWatcher(model.dir, model, props.watcher);

  // The detail's reader (most of the library's build and verify code) is loaded when a rollout is
  // first opened, not on the way to the first screen.
  const loadDetail = useMemo<DetailLoader>(
    () =>
      props.loadDetail ??
      (async (id) =>
        (await import('../../src/rollout-read/rollout-detail.js')).loadRolloutDetail(model.storeOptions, id)),
    [props.loadDetail, model],
  );

  // The view state lives in a ref as well as in React state: keys that arrive together are
  // applied one after the other on the ref, without waiting for a render (see keys.ts).
  const [ui, setUi] = useState<UiState>(() => initialUi(props.initialSort));
  const uiRef = useRef(ui);

  const width = Math.max(20, size.columns);
  const { total, view: viewHeight, page } = viewHeights(size.rows);
  const { screen, help, searchDraft, filter, sort, nav, openId, detailOffset, callIndex } = ui;

  const snapshot = handle.snapshot;
  // Kept up to date from each snapshot's delta: a frame during a load of 100,000 rollouts does
  // not sort them all again.
  const order = useRef<VisibleRowsCache | null>(null);
  order.current ??= new VisibleRowsCache();
  const cache = order.current;
  const rows = useMemo(() => cache.rows(snapshot, filter, sort), [cache, snapshot, filter, sort]);
  // The rollout the user chose (the top row until a key moves the selection), wherever the load puts it.
  const selected = selectedIndex(nav, rows);
  const offset = visibleOffset(nav.offset, selected, rows.length, page);
  // During a load, the rows on screen not read yet are read next, whatever the sort, filter or
  // scroll position (the load's own order is the default view's).
  const loading = !snapshot.ready && screen === 'list';
  useEffect(() => {
    if (!loading) return;
    const unread: string[] = [];
    for (const r of rows.slice(offset, offset + page)) if (!r.loaded) unread.push(r.id);
    if (unread.length > 0) model.readSoon(unread);
  }, [model, loading, rows, offset, page]);
  // The trace's first frames with rows listed and with the visible rows read, once drawn.
  const traced = useRef({ listed: false, read: false });
  const trace = props.trace;
  useEffect(() => {
    if (!trace || screen !== 'list' || rows.length === 0) return;
    if (!traced.current.listed) trace(`frame: ${rows.length} rows listed`);
    traced.current.listed = true;
    if (!traced.current.read && rows.slice(offset, offset + page).every((r) => r.loaded)) {
      traced.current.read = true;
      trace(`frame: visible rows read (${snapshot.totals.loaded} read)`);
    }
  }, [trace, screen, rows, offset, page, snapshot]);

  // Ages are on screen only with rows or a rollout's detail.
  const now = useNow(props.clock, undefined, screen === 'detail' || rows.length > 0);
  const openRow = openId === null ? undefined : model.row(openId);
  const detailState = useRolloutDetail(
    loadDetail,
    screen === 'detail' ? openId : null,
    openRow?.seq ?? 0,
    callIndex !== null,
  );
  // What the list knows of the open rollout while its detail is not read (a lock held elsewhere).
  const openLockWait = openId === null ? undefined : snapshot.lockWaits.get(openId);
  const openRowError = openRow?.error;
  const detailLineCount =
    screen === 'detail' && openId !== null
      ? rolloutViewLines({
          id: openId,
          ...detailState,
          width,
          now,
          styles,
          lockWaitSince: openLockWait,
          rowError: openRowError,
          callIndex,
        }).length
      : 0;

  // What the key reducer needs, current as of this render: the rows shown (the reducer reads
  // their ids; no list of every id is made per key), or for another filter, computed on demand
  // from the same snapshot.
  const ctxRef = useRef<KeyContext | null>(null);
  const keyContext: KeyContext = {
    rows: (f, s) => (f === filter && s === sort ? rows : visibleRows(snapshot.rows, f, s)),
    page,
    detailPage: viewHeight,
    detailMax: maxDetailOffset(detailLineCount, viewHeight),
    callCount: detailState.detail?.tree.length ?? 0,
  };
  // Once this render is on screen: keys apply to what is shown.
  useLayoutEffect(() => {
    ctxRef.current = keyContext;
  });

  useInput((input, key) => {
    let next = uiRef.current;
    for (const [i, k] of splitKeys(input, key)) {
      next = reduceKey(next, i, k, ctxRef.current!);
      if (next.quit) break;
    }
    if (next === uiRef.current) return;
    uiRef.current = next;
    setUi(next);
    if (next.quit) exit();
  });

  let body;
  if (help) body = <Help width={width} height={viewHeight} styles={styles} />;
  else if (screen === 'detail' && openId !== null)
    body = (
      <RolloutView
        id={openId}
        detail={detailState.detail}
        loading={detailState.loading}
        error={detailState.error}
        lockWaitSince={openLockWait}
        rowError={openRowError}
        callIndex={callIndex}
        offset={detailOffset}
        width={width}
        height={viewHeight}
        now={now}
        styles={styles}
      />
    );
  else
    body = (
      <DirectoryView
        snapshot={snapshot}
        rows={rows}
        selected={selected}
        offset={offset}
        filter={filter}
        sort={sort}
        width={width}
        height={viewHeight}
        now={now}
        styles={styles}
      />
    );

  return (
    <Box flexDirection="column" width={width} height={total}>
      {body}
      <Footer screen={help ? 'list' : screen} width={width} filter={filter} searchDraft={searchDraft} styles={styles} />
    </Box>
  );
}

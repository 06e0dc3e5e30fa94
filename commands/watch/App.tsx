/**
 * The watch app: wires the hooks (model, watcher, terminal size, clock, rollout detail) to the
 * views and handles keys. It never touches the filesystem itself; every read goes through the
 * directory model or the detail loader it is given, asynchronously, so a key is handled at once
 * whatever the store is doing.
 *
 * The whole frame is `rows - 1` lines high: Ink clears the entire terminal on every frame whose
 * output is as tall as the terminal (visible flicker), and one line less avoids that path.
 */
import { useMemo } from 'react';
import { Box } from 'ink';
import type { Styles } from '../render/styles.js';
import type { DirectoryModel } from '../../src/watch/directory-model.js';
import { visibleRows, type SortMode } from '../../src/watch/rows.js';
import { DirectoryView } from './DirectoryView.js';
import { viewHeights } from './list-header.js';
import { Footer } from './Footer.js';
import { Help } from './Help.js';
import { RolloutView, maxDetailOffset, rolloutViewLines } from './RolloutView.js';
import { useDirectoryModel } from './hooks/use-directory-model.js';
import { useDirectoryWatcher, type DirectoryWatcherOptions } from './hooks/use-directory-watcher.js';
import { useFrameTrace } from './hooks/use-frame-trace.js';
import { useKeyContext, useKeys } from './hooks/use-keys.js';
import { useNow } from './hooks/use-now.js';
import { useRolloutDetail, type DetailLoader } from './hooks/use-rollout-detail.js';
import { useReadSoon } from './hooks/use-read-soon.js';
import { useTerminalSize, type SizedStream } from './hooks/use-terminal-size.js';
import { useVisibleRows } from './hooks/use-visible-rows.js';
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

  const [ui, keyContextRef] = useKeys(props.initialSort);

  const width = Math.max(20, size.columns);
  const { total, view: viewHeight, page } = viewHeights(size.rows);
  const { screen, help, searchDraft, filter, sort, nav, openId, detailOffset, callIndex } = ui;

  const snapshot = handle.snapshot;
  const rows = useVisibleRows(snapshot, filter, sort);
  // The rollout the user chose (the top row until a key moves the selection), wherever the load puts it.
  const selected = selectedIndex(nav, rows);
  const offset = visibleOffset(nav.offset, selected, rows.length, page);
  useReadSoon(model, !snapshot.ready && screen === 'list', rows, offset, page);
  useFrameTrace(props.trace, screen === 'list', rows, offset, page, snapshot.totals.loaded);

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
  useKeyContext(keyContextRef, {
    rows: (f, s) => (f === filter && s === sort ? rows : visibleRows(snapshot.rows, f, s)),
    page,
    detailPage: viewHeight,
    detailMax: maxDetailOffset(detailLineCount, viewHeight),
    callCount: detailState.detail?.tree.length ?? 0,
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

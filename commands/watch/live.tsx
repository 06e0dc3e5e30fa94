/**
 * The live view's entry point (loaded only by `tokcap watch` without --once): renders the app
 * with Ink on the terminal's alternate screen, and resolves when the user quits.
 *
 * Ink needs the real terminal streams (size, resize events, raw mode), so this is the one place
 * where a command uses process.stdout and process.stdin directly.
 */
import { render } from 'ink';
import type { Styles } from '../render/styles.js';
import type { DirectoryModel } from '../../src/watch/directory-model.js';
import { WatchApp } from './App.js';
import type { DetailLoader } from './hooks/use-rollout-detail.js';
import type { Trace } from './trace.js';

const ALT_SCREEN_ON = '\u001b[?1049h\u001b[H';
const ALT_SCREEN_OFF = '\u001b[?1049l';

export interface LiveOptions {
  model: DirectoryModel;
  styles: Styles;
  stdout?: NodeJS.WriteStream;
  stdin?: NodeJS.ReadStream;
  /** Use the terminal's alternate screen (default true): the shell's scrollback is left intact. */
  altScreen?: boolean;
  /** TOKCAP_TRACE (./trace.ts). */
  trace?: Trace;
  /** The view starts the model's first scan (default true; false: the caller started it). */
  initialScan?: boolean;
  /** Loads a rollout's detail (default: the App's). */
  loadDetail?: DetailLoader;
}

export async function runLive({
  model,
  styles,
  stdout = process.stdout,
  stdin = process.stdin,
  altScreen = true,
  trace,
  initialScan,
  loadDetail,
}: LiveOptions): Promise<void> {
  if (altScreen) stdout.write(ALT_SCREEN_ON);
  const restore = () => {
    if (altScreen) stdout.write(ALT_SCREEN_OFF);
  };
  process.once('exit', restore);
  let frames = 0;
  try {
    const app = render(
      <WatchApp model={model} styles={styles} trace={trace} initialScan={initialScan} loadDetail={loadDetail} />,
      {
        stdout,
        stdin,
        exitOnCtrlC: true,
        patchConsole: true,
        incrementalRendering: false,
        maxFps: 60,
        // When the first frames reached the terminal (the App traces when it computed them).
        onRender: trace ? () => frames < 8 && trace(`ink: frame ${++frames} written`) : undefined,
      },
    );
    await app.waitUntilExit();
  } finally {
    model.dispose();
    process.off('exit', restore);
    restore();
  }
}

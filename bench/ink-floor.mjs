#!/usr/bin/env node
// The key-to-frame floor of bench/watch-live.mjs: the smallest Ink app that draws rows the way
// `tokcap watch` does (a selection mark, an id, a state) and moves its selection on j/k. It reads
// no files, so the time from a key to its frame in the same tmux harness is the cost of tmux,
// the harness's polling, Node and Ink alone; the watch's own figure is read against it.
import { createElement as h, useState } from 'react';
import { Box, Text, render, useApp, useInput } from 'ink';

const ROWS = Number(process.argv[2] ?? 33);

function FloorList() {
  const [selected, setSelected] = useState(0);
  const { exit } = useApp();
  useInput((input) => {
    if (input === 'j') setSelected((s) => Math.min(ROWS - 1, s + 1));
    else if (input === 'k') setSelected((s) => Math.max(0, s - 1));
    else if (input === 'q') exit();
  });
  const rows = Array.from({ length: ROWS }, (_, i) =>
    h(Text, { key: i }, `${i === selected ? '›' : ' '} r${String(i).padStart(5, '0')}  live      1 call`),
  );
  return h(Box, { flexDirection: 'column' }, ...rows);
}

render(h(FloorList));

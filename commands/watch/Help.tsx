/** The help overlay (`?`): the keys and what the columns mean. */
import { Box, Text } from 'ink';
import type { Styles } from '../render/styles.js';
import { HELP_LINES } from './key-help.js';
import { truncate } from './fit-text.js';

export interface HelpProps {
  width: number;
  height: number;
  styles: Styles;
}

export function Help({ width, height, styles }: HelpProps) {
  const lines = HELP_LINES.slice(0, Math.max(0, height - 1)).map((l, i) =>
    i === 0 ? styles.heading(truncate(l, width)) : truncate(l, width),
  );
  lines.push(styles.dim(truncate('press ? or Esc to close', width)));
  while (lines.length < height) lines.push('');
  return (
    <Box flexDirection="column" width={width} height={height}>
      {lines.slice(0, height).map((line, i) => (
        <Text key={i} wrap="truncate-end">
          {line === '' ? ' ' : line}
        </Text>
      ))}
    </Box>
  );
}

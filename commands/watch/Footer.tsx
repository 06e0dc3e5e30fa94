/** The keys line at the bottom (or the search prompt while searching). */
import { Text } from 'ink';
import type { Styles } from '../render/styles.js';
import type { RowFilter } from '../../src/watch/rows.js';
import { footerLine, type Screen } from './key-help.js';
import { truncate } from './fit-text.js';

export interface FooterProps {
  screen: Screen;
  width: number;
  filter: RowFilter;
  /** The search text being typed, or null when not searching. */
  searchDraft: string | null;
  styles: Styles;
}

export function Footer({ screen, width, filter, searchDraft, styles }: FooterProps) {
  if (searchDraft !== null) {
    const prompt = truncate(`/${searchDraft}`, Math.max(1, width - 30));
    return (
      <Text wrap="truncate-end">
        {styles.heading(prompt)}
        {'█  '}
        {styles.dim('Enter keep  Esc clear')}
      </Text>
    );
  }
  return <Text wrap="truncate-end">{styles.dim(footerLine(screen, width, filter))}</Text>;
}

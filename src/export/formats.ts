/**
 * The export formats, named once for the library and the command line's option table (which
 * loads this module at every start: it imports nothing).
 */
export const EXPORT_FORMATS = ['jsonl', 'tinker', 'store', 'parquet'] as const;
export type ExportFormatName = (typeof EXPORT_FORMATS)[number];

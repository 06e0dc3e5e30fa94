/** Documents nested deeper than this are refused (orjson >= 3.9.15; docs/format.md#open-question-10). */
export const MAX_JSON_DEPTH = 1024;

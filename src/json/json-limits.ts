/** Documents nested deeper than this are refused (orjson >= 3.9.15; FORMAT.md Appendix A.10). */
export const MAX_JSON_DEPTH = 1024;

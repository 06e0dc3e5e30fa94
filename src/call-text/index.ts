/** A call's tokens for its text view: the prompt it adds, its generation and log-prob bands. */
export { callTokens, logProbBand, LOG_PROB_BANDS, type CallTokens, type LogProbBand } from './call-tokens.js';

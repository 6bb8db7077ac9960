/**
 * The parser pool's worker: parses model messages off the server's event loop. A message is
 * plain text in and plain JSON data out (parseAction never returns functions or prototypes), so
 * it crosses the thread boundary by structured clone unchanged.
 */
import { parentPort } from 'node:worker_threads';
import { parseAction } from '../actions/parse.js';
import type { ParseOptions } from '../actions/types.js';

export interface ParseRequest {
  id: number;
  text: string;
  options: ParseOptions;
}

parentPort?.on('message', (request: ParseRequest) => {
  parentPort?.postMessage({ id: request.id, parsed: parseAction(request.text, request.options) });
});

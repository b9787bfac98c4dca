/**
 * Turning a caught value into text for a log line or an error message. `catch` hands over
 * `unknown`: usually an Error, but a rejected promise or a callback may carry anything.
 */

/** The message of an Error, or the value itself as text when something else was thrown. */
export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

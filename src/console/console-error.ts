/**
 * An answer of the console's API other than 200: the HTTP status and one clear line for the
 * page. Errors from the broker keep the broker's own message (api-router.ts maps them).
 */
export class ConsoleError extends Error {
  override name = 'ConsoleError';
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export const badRequest = (message: string) => new ConsoleError(400, message);
export const notFound = (message: string) => new ConsoleError(404, message);

// The text of anything thrown, for messages and logs. No dependencies, so the CLI's parsers can use it too.
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

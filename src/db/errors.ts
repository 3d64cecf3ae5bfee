/** Raised when another process holds the embedded database. */
export class DatabaseInUseError extends Error {}

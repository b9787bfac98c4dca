// Types for scripts/build-fingerprint.mjs (plain JavaScript: scripts/build.mjs runs without tsx).
export function fingerprint(root: string): string;
export function stampPath(root: string): string;
export function distIsCurrent(root: string): boolean;

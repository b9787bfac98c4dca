/**
 * The group coordinator's settings: the broker settings it reads (a slice of the broker's
 * config, which the broker's config satisfies as it is) and the settings its shards work with.
 */

export interface GroupCoordinatorConfig {
  minSessionTimeoutMs: number;
  maxSessionTimeoutMs: number;
  initialRebalanceDelayMs: number;
  maxGroupSize: number;
  offsetMetadataMaxBytes: number;
  /** offsets.retention.minutes in ms. */
  offsetsRetentionMs: number;
  offsetsRetentionCheckIntervalMs: number;
}

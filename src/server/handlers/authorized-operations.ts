/**
 * Authorized-operation bit sets (bit n = Kafka AclOperation code n). Fjord has no ACLs yet, so
 * every principal may do everything a resource supports.
 */
const bits = (...ops: number[]): number => ops.reduce((acc, op) => acc | (1 << op), 0);
// READ 3, WRITE 4, CREATE 5, DELETE 6, ALTER 7, DESCRIBE 8, CLUSTER_ACTION 9,
// DESCRIBE_CONFIGS 10, ALTER_CONFIGS 11, IDEMPOTENT_WRITE 12
export const TOPIC_AUTHORIZED_OPERATIONS = bits(3, 4, 5, 6, 7, 8, 10, 11);
export const CLUSTER_AUTHORIZED_OPERATIONS = bits(5, 7, 8, 9, 10, 11, 12);
export const GROUP_AUTHORIZED_OPERATIONS = bits(3, 6, 8);
/** "Not requested": Kafka's sentinel, Integer.MIN_VALUE. */
export const NO_AUTHORIZED_OPERATIONS = -2147483648;

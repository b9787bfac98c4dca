/**
 * Authorized-operation bit sets (bit n = Kafka AclOperation code n) are computed per principal by
 * `authorizedOperations` in authz.ts (every supported operation when no authorizer is configured).
 */
/** "Not requested": Kafka's sentinel, Integer.MIN_VALUE. */
export const NO_AUTHORIZED_OPERATIONS = -2147483648;

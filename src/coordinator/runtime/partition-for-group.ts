/** Re-exported from common/ (the offset history's record format in protocol/ needs it too). */
export { javaStringHashCode, kafkaAbs, partitionForGroup } from '../../common/partition-for-group.js';

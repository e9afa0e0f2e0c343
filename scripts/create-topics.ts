/**
 * Creates the project's topics (lib/log/topics.ts TOPICS) on the configured broker when missing;
 * existing topics are left as they are. Partitions come from TOPIC_PARTITIONS, the namespace from
 * TOPIC_NAMESPACE (lib/config/shared.ts). Used by scripts/infra.sh and the compose `init` service.
 *
 * Usage: `tsx scripts/create-topics.ts`. Exit 0 on success, 1 with the reason on stderr.
 */
import { configLoader } from '../lib/config/core.ts';
import { kafkaSection, processSection } from '../lib/config/shared.ts';
import { createKafka } from '../lib/log/kafka.ts';
import { ensureTopics, TOPICS, type TopicKey, topicName } from '../lib/log/topics.ts';
import { createLogger } from '../lib/logger.ts';

async function main(): Promise<void> {
  const config = configLoader([kafkaSection, processSection])();
  const logger = createLogger('create-topics', config.process.logLevel);
  const admin = createKafka(config, 'create-topics', logger).admin();
  await admin.connect();
  try {
    const created = await ensureTopics(admin, config);
    const all = (Object.keys(TOPICS) as TopicKey[]).map((k) => topicName(config, k));
    logger.info({ created, topics: all, partitions: config.kafka.partitions }, 'topics ensured');
  } finally {
    await admin.disconnect();
  }
}

main().catch((err: unknown) => {
  console.error(`create-topics failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});

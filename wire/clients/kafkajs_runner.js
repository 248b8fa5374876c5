// One kafkajs 2.2.4 consumer as a subprocess of wire/clients/group.py, printing the same JSON event lines as
// wire/clients/runner.py. kafkajs has no rebalance listener: a rebalance is the REBALANCING event (kafkajs is
// eager: it stops fetching every partition and rejoins, so the whole assignment is revoked there) and the
// new assignment is GROUP_JOIN's memberAssignment. It has no group.instance.id and no max.poll.interval
// (its heartbeats come from the fetch loop), so the static and stall schedules are not run with it.
// Usage: node kafkajs_runner.js --key value ... (bootstrap, group, topic, name, duration, epoch,
// session-timeout-ms, heartbeat-interval-ms, max-poll-interval-ms, mode).
const args = {};
for (let i = 2; i + 1 < process.argv.length; i += 2) args[process.argv[i].slice(2)] = process.argv[i + 1];
const { Kafka, logLevel } = require(process.env.KGC_KAFKAJS || "kafkajs");

const epoch = parseFloat(args.epoch);
const name = args.name;
const owned = new Set();
function emit(event, parts, extra) {
  const sorted = [...new Set(parts)].sort();
  if (event === "assigned") sorted.forEach((p) => owned.add(p));
  if (event === "revoked" || event === "lost") sorted.forEach((p) => owned.delete(p));
  const line = { t: Math.round((Date.now() / 1000 - epoch) * 10000) / 10000, name, event, partitions: sorted, ...extra };
  process.stdout.write(JSON.stringify(line) + "\n");
}

async function main() {
  const duration = parseFloat(args.duration);
  const mode = args.mode || "normal";
  const stopAt = mode.startsWith("leave-after") ? Math.min(parseFloat(mode.slice(12)), duration) : duration;
  const kafka = new Kafka({ clientId: name, brokers: [args.bootstrap], logLevel: logLevel.NOTHING,
                            retry: { retries: 3 } });
  const consumer = kafka.consumer({ groupId: args.group, sessionTimeout: parseInt(args["session-timeout-ms"]),
    heartbeatInterval: parseInt(args["heartbeat-interval-ms"]),
    rebalanceTimeout: parseInt(args["max-poll-interval-ms"] || "60000") });
  consumer.on(consumer.events.REBALANCING, () => { if (owned.size) emit("revoked", [...owned], {}); });
  consumer.on(consumer.events.GROUP_JOIN, (e) => {
    const parts = [];
    for (const [topic, ps] of Object.entries(e.payload.memberAssignment || {})) ps.forEach((p) => parts.push(`${topic}-${p}`));
    if (owned.size) emit("revoked", [...owned], {});
    emit("assigned", parts, {});
  });
  consumer.on(consumer.events.CRASH, (e) => emit("error", [], { message: `crash: ${e.payload.error}` }));
  let reason = "error";
  const started = Date.now();
  try {
    await consumer.connect();
    await consumer.subscribe({ topics: [args.topic], fromBeginning: true });
    await consumer.run({ eachBatch: async () => {} });
    emit("started", [], {});
    while ((Date.now() - started) / 1000 < stopAt) await new Promise((r) => setTimeout(r, 100));
    reason = mode.startsWith("leave-after") ? "leave-after" : "duration";
  } catch (e) {
    emit("error", [], { message: String(e) });
  } finally {
    emit("stopped", [...owned], { reason });
    await Promise.race([consumer.disconnect(), new Promise((r) => setTimeout(r, 5000))]);
    process.exit(0);
  }
}
main();

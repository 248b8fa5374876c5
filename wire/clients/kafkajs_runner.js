// One kafkajs 2.2.4 consumer as a subprocess of wire/clients/group.py, printing the same JSON event lines as
// wire/clients/runner.py. kafkajs has no rebalance listener: a rebalance is the REBALANCING event (kafkajs is
// eager: it stops fetching every partition and rejoins, so the whole assignment is revoked there) and the
// new assignment is GROUP_JOIN's memberAssignment. It has no group.instance.id and no max.poll.interval
// (its heartbeats come from the fetch loop), so the static and stall schedules are not run with it.
// A line "stop" on stdin ends the run early, as its duration would (wire/clients/group.py, once the group settled).
// Fetches wait at most 500 ms (kafkajs's default maxWaitTimeInMs is 5000): kafkajs heartbeats from its fetch loop,
// so a 5 s long poll on an empty topic delays its rejoin by up to 5 s against a broker that honours the wait
// (tansu, noida-db) but not against kgc serve, which caps the wait at 500 ms (wire/cluster.py) — a difference of
// the client's settings, not of the coordinators. 500 ms is the other four libraries' default fetch wait.
// Usage: node kafkajs_runner.js --key value ... (bootstrap, group, topic, name, duration, epoch,
// session-timeout-ms, heartbeat-interval-ms, max-poll-interval-ms, mode).
const args = {};
for (let i = 2; i + 1 < process.argv.length; i += 2) args[process.argv[i].slice(2)] = process.argv[i + 1];
const { Kafka, logLevel } = require(process.env.KGC_KAFKAJS || "kafkajs");

let epoch = parseFloat(args.epoch);
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
  // kafkajs tells a rebalance to the application only when its fetch loop meets one (REBALANCING); it also
  // rejoins inside its join-and-sync retries and after UNKNOWN_MEMBER_ID without an event. It stops fetching
  // before any JoinGroup it sends, so that request (its debug log line) ends its ownership; warnings and
  // errors go to stderr (the run keeps their tail).
  const logCreator = () => ({ namespace, level, label, log }) => {
    const message = String(log.message || "");
    if (message.startsWith("Request JoinGroup")) {
      if (owned.size) emit("revoked", [...owned], { reason: "rejoining" });
    } else if (level <= logLevel.WARN) {
      process.stderr.write(`${new Date().toISOString()} ${label} ${namespace} ${message}${log.error ? ": " + log.error : ""}\n`);
    }
  };
  const kafka = new Kafka({ clientId: name, brokers: [args.bootstrap], logLevel: logLevel.DEBUG, logCreator,
                            retry: { retries: 3 } });
  const consumer = kafka.consumer({ groupId: args.group, sessionTimeout: parseInt(args["session-timeout-ms"]),
    heartbeatInterval: parseInt(args["heartbeat-interval-ms"]),
    rebalanceTimeout: parseInt(args["max-poll-interval-ms"] || "60000"), maxWaitTimeInMs: 500 });
  let stopRequested = false;
  let pending = "";
  let go = null;
  const gone = new Promise((resolve) => { go = resolve; });
  process.stdin.on("data", (chunk) => {
    pending += chunk.toString();
    const lines = pending.split("\n");
    if (lines.some((l) => l.trim() === "stop")) stopRequested = true;
    const goLine = lines.find((l) => l.startsWith("go "));
    if (goLine) go(parseFloat(goLine.slice(3)));
  });
  process.stdin.on("end", () => go(null));
  process.stdin.on("error", () => {});
  if (args["wait-go"]) {
    // --wait-go 1: kafkajs is loaded; say so, wait for "go EPOCH", start at start-at seconds past it
    process.stdout.write('{"ready": 1}\n');  // exactly the line wire/clients/group.py waits for
    const e = await gone;
    if (e === null) process.exit(0);
    epoch = e;
    const wait = (e + parseFloat(args["start-at"] || "0")) * 1000 - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }
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
    emit("started", [], {});   // before connect, as the other runners do (kafkajs's run() returns only once joined)
    await consumer.connect();
    await consumer.subscribe({ topics: [args.topic], fromBeginning: true });
    await consumer.run({ eachBatch: async () => {} });
    while (!stopRequested && (Date.now() - started) / 1000 < stopAt) await new Promise((r) => setTimeout(r, 100));
    reason = mode.startsWith("leave-after") && !stopRequested ? "leave-after" : "duration";
  } catch (e) {
    emit("error", [], { message: String(e) });
  } finally {
    emit("stopped", [...owned], { reason });
    await Promise.race([consumer.disconnect(), new Promise((r) => setTimeout(r, 5000))]);
    process.exit(0);
  }
}
main();

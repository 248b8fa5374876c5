// One Apache Kafka Java consumer (kafka-clients 3.9.1, classic group protocol, the default eager range
// assignor) as a subprocess of wire/clients/group.py: joins a group, polls, and prints one JSON line per
// event, exactly as wire/clients/runner.py does for the Python libraries (see its docstring for the events).
// Arguments: --key value pairs (bootstrap, group, topic, name, duration, epoch, session-timeout-ms,
// heartbeat-interval-ms, max-poll-interval-ms, mode, stall-s, instance-id, listener-sleep-s). A line "stop" on
// stdin ends the run early, as its duration would (wire/clients/group.py, once the group settled).
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeSet;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

public final class KgcConsumer {
    private static double epoch;
    private static String name;
    private static final TreeSet<String> owned = new TreeSet<>();
    private static volatile boolean stopRequested = false;

    private static final java.io.BufferedReader stdin =
            new java.io.BufferedReader(new java.io.InputStreamReader(System.in));

    /** --wait-go: say {"ready": 1}, wait for "go EPOCH" on stdin, sleep until start-at seconds past EPOCH
     *  (JVM start-up then stays off the schedule's time line); the epoch. */
    private static double awaitGo(double startAt) throws java.io.IOException {
        System.out.println("{\"ready\": 1}");
        System.out.flush();
        for (String line; (line = stdin.readLine()) != null; ) {
            if (line.startsWith("go ")) {
                double e = Double.parseDouble(line.substring(3).trim());
                sleep(Math.max(0, e + startAt - System.currentTimeMillis() / 1000.0));
                return e;
            }
        }
        System.exit(0);
        return 0;
    }

    private static void watchStdin() {
        Thread t = new Thread(() -> {
            try (java.io.BufferedReader in = stdin) {
                for (String line; (line = in.readLine()) != null; ) {
                    if (line.trim().equals("stop")) { stopRequested = true; return; }
                }
            } catch (java.io.IOException e) {
                // no stdin: the run ends at its duration
            }
        });
        t.setDaemon(true);
        t.start();
    }

    private static synchronized void emit(String event, Collection<String> parts, String extra) {
        TreeSet<String> sorted = new TreeSet<>(parts);
        if (event.equals("assigned")) owned.addAll(sorted);
        if (event.equals("revoked") || event.equals("lost")) owned.removeAll(sorted);
        StringBuilder b = new StringBuilder();
        b.append(String.format("{\"t\": %.4f, \"name\": \"%s\", \"event\": \"%s\", \"partitions\": [",
                System.currentTimeMillis() / 1000.0 - epoch, name, event));
        String sep = "";
        for (String p : sorted) { b.append(sep).append('"').append(p).append('"'); sep = ", "; }
        b.append(']').append(extra).append('}');
        System.out.println(b);
        System.out.flush();
    }

    private static List<String> names(Collection<TopicPartition> tps) {
        List<String> out = new ArrayList<>();
        for (TopicPartition tp : tps) out.add(tp.topic() + "-" + tp.partition());
        return out;
    }

    private static void sleep(double seconds) {
        try { Thread.sleep((long) (seconds * 1000)); } catch (InterruptedException e) { Thread.currentThread().interrupt(); }
    }

    public static void main(String[] argv) {
        Map<String, String> a = new HashMap<>();
        for (int i = 0; i + 1 < argv.length; i += 2) a.put(argv[i].substring(2), argv[i + 1]);
        epoch = Double.parseDouble(a.get("epoch"));
        name = a.get("name");
        double duration = Double.parseDouble(a.get("duration"));
        String mode = a.getOrDefault("mode", "normal");
        double stopAt = mode.startsWith("leave-after") ? Math.min(Double.parseDouble(mode.substring(12).trim()), duration) : duration;
        int maxPoll = Integer.parseInt(a.getOrDefault("max-poll-interval-ms", "300000"));
        double stall = Double.parseDouble(a.getOrDefault("stall-s", String.valueOf(maxPoll / 1000.0 + 3)));
        double listenerSleep = Double.parseDouble(a.getOrDefault("listener-sleep-s", "0"));
        Properties p = new Properties();
        p.put("bootstrap.servers", a.get("bootstrap"));
        p.put("group.id", a.get("group"));
        p.put("client.id", name);
        p.put("session.timeout.ms", a.get("session-timeout-ms"));
        p.put("heartbeat.interval.ms", a.get("heartbeat-interval-ms"));
        p.put("max.poll.interval.ms", String.valueOf(maxPoll));
        p.put("auto.offset.reset", "earliest");
        p.put("key.deserializer", ByteArrayDeserializer.class.getName());
        p.put("value.deserializer", ByteArrayDeserializer.class.getName());
        if (a.containsKey("instance-id")) p.put("group.instance.id", a.get("instance-id"));
        long start = System.nanoTime();
        boolean stalled = false;
        String reason = "error";
        KafkaConsumer<byte[], byte[]> consumer = null;
        try {
            consumer = new KafkaConsumer<>(p);
            final KafkaConsumer<byte[], byte[]> c = consumer;
            consumer.subscribe(List.of(a.get("topic")), new ConsumerRebalanceListener() {
                public void onPartitionsAssigned(Collection<TopicPartition> parts) {
                    emit("assigned", names(parts), ", \"generation\": " + c.groupMetadata().generationId());
                    sleep(listenerSleep);
                }
                public void onPartitionsRevoked(Collection<TopicPartition> parts) {
                    sleep(listenerSleep);
                    emit("revoked", names(parts), "");
                }
                public void onPartitionsLost(Collection<TopicPartition> parts) {
                    emit("lost", names(parts), "");
                }
            });
            // constructing the client and subscribing touch no broker (but load most of its classes: seconds on
            // a loaded machine); asking the topic's partitions warms its network path without joining the group.
            // With --wait-go all of it happens before the run's time line begins.
            if (a.containsKey("wait-go")) {
                consumer.partitionsFor(a.get("topic"), Duration.ofSeconds(30));
                epoch = awaitGo(Double.parseDouble(a.getOrDefault("start-at", "0")));
            }
            watchStdin();
            start = System.nanoTime();
            emit("started", List.of(), "");
            while (!stopRequested && (System.nanoTime() - start) / 1e9 < stopAt) {
                consumer.poll(Duration.ofMillis(200));
                if (mode.equals("slow") && !stalled && !owned.isEmpty()) {
                    stalled = true;
                    double len = Math.max(0, Math.min(stall, stopAt - (System.nanoTime() - start) / 1e9));
                    double now = System.currentTimeMillis() / 1000.0 - epoch;
                    emit("stalled", new ArrayList<>(owned), String.format(", \"deadline\": %.4f, \"stall_s\": %.3f", now + maxPoll / 1000.0, len));
                    sleep(len);
                    emit("resumed", new ArrayList<>(owned), "");
                }
            }
            reason = mode.startsWith("leave-after") && !stopRequested ? "leave-after" : "duration";
        } catch (Exception e) {
            emit("error", List.of(), ", \"message\": \"" + e.getClass().getSimpleName() + ": "
                    + String.valueOf(e.getMessage()).replace("\\", "/").replace("\"", "'") + "\"");
        } finally {
            emit("stopped", new ArrayList<>(owned), ", \"reason\": \"" + reason + "\"");
            if (consumer != null) consumer.close(Duration.ofSeconds(5));
        }
        System.exit(0);
    }
}

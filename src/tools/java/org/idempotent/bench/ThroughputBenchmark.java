package org.idempotent.bench;

import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.Queue;
import jakarta.jms.Session;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import org.apache.activemq.artemis.jms.client.ActiveMQConnectionFactory;
import org.idempotent.loadgen.MessageSet;
import org.idempotent.loadgen.Options;
import org.idempotent.stack.Build;
import org.idempotent.stack.FreePort;
import org.idempotent.stack.OtlpReceiver;
import org.idempotent.stack.PayaraMicroProcess;
import org.idempotent.stack.PostgresCluster;
import org.idempotent.stack.Settings;

/**
 * The consumer against its physical ceilings, side by side in one run on one machine, with one broker configuration,
 * one database and one seeded message set: {@code mvn -Pbench [-Dbench.args="..."]}.
 *
 * <ul>
 *   <li>DB ceiling ({@link DbCeiling}): the product's transaction over JDBC by N threads;
 *   <li>container ceiling: the deployed path with the database work switched off ({@link BenchShortcut} on the
 *       consumer's onMessage): the MDB receives, parses, validates and acknowledges;
 *   <li>product: the full path at each concurrency (CONSUMER_MAX_SESSIONS), cold and warm ({@link ContainerRuns});
 *   <li>dedup off, outbox off: the full path without the processed_events insert ({@link BenchShortcut}) or without
 *       the announcement ({@link OutboxOff}), at the product's best concurrency;
 *   <li>heaps and compared variants: the product again with other JVM options, another JDK or another WAR;
 *   <li>latency ({@link PacedLatency}): the set sent at half the warm rate, send to commit;
 *   <li>duplicate cost ({@link DuplicateCost}, --duplicate-cost): the product and the compared variants on the same
 *       distinct events without copies and with a copy of each, in the rounds: CPU per duplicate against CPU per new
 *       payment;
 *   <li>fresh broker: last, a cold pass on a broker that has just started;
 *   <li>cost growth: the product with 10,000,000 rows already in processed_events, random and time-ordered IDs.
 * </ul>
 *
 * Every container run starts from a fresh database with the whole message set preloaded into the queue before Payara
 * Micro starts. Prints a table and the ratios ({@link Report}); writes a CSV and a PNG chart to target/bench. With
 * --outbox-writes every container pass also counts the outbox's row versions per payment ({@link OutboxWrites}). With
 * --volume it runs the volume benchmark instead ({@link VolumeBenchmark}).
 */
public final class ThroughputBenchmark {

    static final String CONTAINER_CEILING = "container ceiling";
    static final String DEDUP_OFF = "dedup off";
    static final String OUTBOX_OFF = "outbox off";
    /** The product's run on a broker that has just started, not warmed up. */
    static final String FRESH_BROKER = "product, fresh broker";
    /**
     * Prefix of the --compare variants' names. Their options are Payara's JVM options, but java:PATH runs it on that
     * java binary, war:PATH deploys that WAR (the product as it was before a change, say), runtime:DIR runs the Payara
     * Micro, adapter and server libraries of another build's target/runtime (the product on the server it had before).
     */
    static final String COMPARED = "compared: ";
    /** In a --compare variant's options: tracing on, every trace recorded and exported over OTLP/HTTP. */
    static final String TRACED = "traced";

    /** The product's work without the application server (BareConsumer), printed as a compared variant. */
    static final String BARE = COMPARED + "bare consumer";
    /**
     * The product on tables without statistics: a fresh database with autovacuum off for the whole run (as in a fresh
     * install's first minutes, or on a new day's partition), against the product's own runs with autovacuum on.
     */
    static final String NO_STATS = "product, no statistics";
    /**
     * Its counterpart: the product on a fresh database whose statistics autovacuum keeps fresh as its tables grow
     * (autovacuum_naptime 1 s for the run, not the default minute): in the product's own runs, on a database made a
     * minute before, autovacuum's launcher visits it once at most, early in the cold pass, so their statistics are
     * those of small tables.
     */
    static final String FRESH_STATS = "product, fresh statistics";

    private static final Path OUT = Path.of("target", "bench");
    /** Flyway logs every migration at INFO, once per run here; kept referenced so the level sticks. */
    private static final java.util.logging.Logger FLYWAY = java.util.logging.Logger.getLogger("org.flywaydb");

    private static final String USAGE = "--messages N --duplicates F --accounts N --seed N --concurrency 1,2,4,8,16"
            + " --big-rows N --skip-big --only db,container,bare,camel,no-stats,dedup-off,outbox-off,latency,fresh-broker,big"
            + " --heaps 256m,512m --compare \"label=-XX:... java:/path/bin/java war:/path.war runtime:/other/target/runtime cds traced micro:--option|label=...\""
            + " --jfr N --ids v4|v7 (the event IDs of the message set: random, or time-ordered RFC 9562 v7; v4)"
            + " --payara-jvm \"-XX:... -XX:...\" --paced-warmup PASSES --latency-of label,label (compared variants)"
            + " --repeat ROUNDS (of the product, dedup off, outbox off and the compared variants; medians)"
            + " --baseline label (the compared variant issue 28's CPU targets are against)"
            + " --statements (each pass prints the statements it ran per message; not for CPU figures)"
            + " --relay-passes (each pass of the product counts its relay's passes; pg_stat_statements loaded)"
            + " --steady (the product, the bare consumer and the --duplicate-cost runs drain the set a third time)"
            + " --outbox-writes (each pass prints the outbox's row versions per payment; 11 s more per pass)"
            + " --duplicate-cost [product,label] (the product and the compared variants, or those named, without"
            + " duplicates and with a copy of each event: CPU per duplicate against CPU per new payment)"
            + VolumeBenchmark.USAGE
            + MemorySoak.USAGE;

    private static final Set<String> OPTIONS = Set.of(
            "messages",
            "duplicates",
            "accounts",
            "seed",
            "concurrency",
            "big-rows",
            "skip-big",
            "ids",
            "only",
            "heaps",
            "compare",
            "jfr",
            "payara-jvm",
            "paced-warmup",
            "latency-of",
            "repeat",
            "baseline",
            "statements",
            "relay-passes",
            "steady",
            "outbox-writes",
            "duplicate-cost");

    private final BenchStack stack;
    private final Options options;
    private final MessageSet messages;
    private final ContainerRuns runs;
    private final Report report = new Report();
    private OtlpReceiver otlp;

    private ThroughputBenchmark(BenchStack stack, Options options) {
        this.stack = stack;
        this.options = options;
        this.messages = messageSet(ids(options.get("ids", "v4")));
        this.runs = new ContainerRuns(
                stack,
                ContainerRuns.Jvm.of(BenchStack.split(options.get("payara-jvm", ""))),
                options.has("jfr") ? OUT.resolve("product.jfr") : null);
        if (options.has("steady")) {
            runs.steadyToo();
        }
        if (options.has("outbox-writes")) {
            runs.countOutboxWrites();
        }
    }

    public static void main(String[] args) throws Exception {
        FLYWAY.setLevel(java.util.logging.Level.WARNING);
        Set<String> known = new HashSet<>(OPTIONS);
        known.addAll(VolumeBenchmark.OPTIONS);
        known.addAll(MemorySoak.OPTIONS);
        Options options = Options.parse(args, known, USAGE);
        Settings settings = Settings.fromEnvironment()
                .with("DB_NAME", "payments_bench")
                .with("PAYMENTS_QUEUE", "payments")
                .withFreeBrokerPorts()
                .with("HTTP_PORT", String.valueOf(FreePort.find()))
                .with("DB_POOL_MAX", "24")
                .with("STACK_DIR", OUT.resolve("stack").toAbsolutePath().toString());
        Files.createDirectories(settings.stackDir());
        if (options.has("volume")) {
            VolumeBenchmark.main(options, settings, OUT);
            return;
        }
        if (options.has("soak")) {
            MemorySoak.main(options, settings, OUT);
            return;
        }
        Files.deleteIfExists(OUT.resolve("product.jfr"));
        // A cluster of its own: commit timestamps on (the latency pass reads them), the machine's cluster untouched,
        // and PostgreSQL's CPU that of this cluster's processes alone.
        List<String> cluster = new ArrayList<>(List.of("track_commit_timestamp = on"));
        if (options.has("statements") || options.has("relay-passes")) {
            cluster.add(StatementCounts.PRELOAD);
        }
        try (PostgresCluster postgres =
                        PostgresCluster.create(OUT.resolve("postgres").toAbsolutePath(), cluster);
                BenchStack stack = BenchStack.start(postgres.serve(settings), postgres, OUT.resolve("broker-gc.log"))) {
            if (options.has("statements")) {
                stack.countStatements();
            }
            if (options.has("relay-passes")) {
                stack.countRelayPasses();
            }
            new ThroughputBenchmark(stack, options).run();
        }
    }

    private void run() throws Exception {
        List<Integer> concurrency = options.getList("concurrency", "1,2,4,8,16").stream()
                .map(Integer::valueOf)
                .toList();
        System.out.printf(
                "Message set: %d messages, %d distinct events, %d accounts, seed %s, %s IDs%n",
                messages.items().size(),
                messages.distinct().size(),
                messages.expectedBalances().size(),
                options.get("seed", "42"),
                options.get("ids", "v4"));
        // As production runs it: the peer's figures and the product's are taken with autovacuum at work.
        String autovacuum = stack.autovacuumSetting();
        System.out.printf("PostgreSQL (the benchmark's own cluster): autovacuum %s%n", autovacuum);
        if (!autovacuum.equals("on")) {
            throw new IllegalStateException("the benchmark's cluster must run with autovacuum on, as production does");
        }
        Map<String, Variant> variants = variants();
        List<String> latencyOf = options.getList("latency-of", "").stream()
                .filter(label -> !label.isBlank())
                .toList();
        latencyOf.forEach(label -> jvmOf(variants, label)); // an unknown label fails now, not after an hour
        List<String> duplicateCost = options.has("duplicate-cost")
                ? DuplicateCost.chosen(options.get("duplicate-cost", ""), variants.keySet())
                : List.of();
        warmBroker();
        warmFileCache();
        if (runs("db")) {
            for (int n : concurrency) {
                report.add(Report.print(DbCeiling.run(stack, messages, n)));
            }
        }
        if (runs("container")) {
            Path war = ContainerRuns.benchWar(
                    stack.settings.stackDir(), BenchShortcut.class, "PaymentConsumer", "onMessage");
            for (int n : concurrency) {
                report.addAll(runs.run(CONTAINER_CEILING, n, war, messages, 0, List.of(), false));
            }
        }
        for (int n : concurrency) {
            boolean profiled = options.has("jfr") && n == options.getInt("jfr", 8);
            report.addAll(runs.run("product", n, Build.WAR, messages, 0, List.of(), profiled));
        }
        int best = report.best("product").concurrency();
        if (runs("big")) {
            long rows = options.getLong("big-rows", 10_000_000);
            report.addAll(runs.run("product, 10M rows, v4 IDs", best, Build.WAR, messages, rows, List.of(), false));
            MessageSet v7 = messageSet(MessageSet.Ids.TIME_ORDERED);
            report.addAll(runs.run("product, 10M rows, v7 IDs", best, Build.WAR, v7, rows, List.of(), false));
        }
        for (String heap : options.getList("heaps", "")) {
            if (!heap.isBlank()) {
                List<String> jvm = List.of("-Xmx" + heap);
                report.addAll(runs.run("product, -Xmx" + heap, best, Build.WAR, messages, 0, jvm, false));
            }
        }
        inRounds(variants, duplicateCost, best);
        if (runs("latency")) {
            PacedLatency paced = new PacedLatency(stack, runs, messages, OUT);
            double rate = report.best("product").rate() / 2;
            int warmups = options.getInt("paced-warmup", 3);
            report.latency(paced.measure("product", best, rate, warmups, List.of()));
            // The same rate for each: a variant is judged by the latency it gives the same offered load.
            for (String label : latencyOf) {
                report.latency(paced.measure(label, best, rate, warmups, jvmOf(variants, label)));
            }
        }
        if (runs("fresh-broker")) {
            // Last: every other variant runs against the warmed broker.
            stack.restartBroker();
            report.addAll(runs.run(FRESH_BROKER, best, Build.WAR, messages, 0, List.of(), false));
        }
        if (otlp != null) {
            System.out.printf("Tracing: %,d spans received over OTLP/HTTP from the traced variants%n", otlp.received());
            otlp.close();
        }
        report.memory(runs.peakHeapMib(), runs.peakRssMib(), options.get("payara-jvm", "defaults"));
        report.write(OUT);
        runs.summarizeProfile();
    }

    /** A variant judged against the product: the WAR it deploys and its JVM options. */
    private record Variant(Path war, List<String> jvm) {}

    /**
     * Dedup off, outbox off and the --compare variants (label=options|label=options: the product again with each) at
     * the product's best concurrency, in rounds, the product again in each after the first, so that a slow minute of
     * the machine falls on every variant alike; each figure is then the median of its rounds. With --duplicate-cost,
     * each round also runs those variants without duplicates and with a copy of each event.
     */
    private void inRounds(Map<String, Variant> variants, List<String> duplicateCost, int sessions) throws Exception {
        List<Callable<List<Result>>> round = new ArrayList<>();
        round.add(() -> runs.run("product", sessions, Build.WAR, messages, 0, List.of(), false));
        for (Map.Entry<String, Variant> variant : variants.entrySet()) {
            Variant v = variant.getValue();
            round.add(() -> runs.run(variant.getKey(), sessions, v.war(), messages, 0, v.jvm(), false));
        }
        if (runs("bare")) {
            round.add(() -> runs.runBare(BARE, sessions, messages));
        }
        if (runs("camel")) {
            for (CamelPeer.Variant peer : CamelPeer.Variant.values()) {
                round.add(() -> runs.runCamel(peer, sessions, messages));
            }
        }
        if (runs("no-stats")) {
            // Each setting for its own run only, and reset whatever happens: every other run is taken with the
            // cluster's defaults.
            round.add(() -> {
                stack.clusterSetting("autovacuum", "off", "off");
                try {
                    return runs.run(NO_STATS, sessions, Build.WAR, messages, 0, List.of(), false);
                } finally {
                    stack.clusterSetting("autovacuum", null, "on");
                }
            });
            round.add(() -> {
                stack.clusterSetting("autovacuum_naptime", "1", "1s");
                try {
                    return runs.run(FRESH_STATS, sessions, Build.WAR, messages, 0, List.of(), false);
                } finally {
                    stack.clusterSetting("autovacuum_naptime", null, "1min");
                }
            });
        }
        if (!duplicateCost.isEmpty()) {
            DuplicateCost cost = new DuplicateCost(
                    "bench-",
                    options.getLong("seed", 42),
                    messages.distinct().size(),
                    options.getInt("accounts", 1000));
            System.out.printf("Duplicate cost: %d distinct events alone, then each with one copy%n", cost.unique());
            for (String name : duplicateCost) {
                Variant variant = variants.getOrDefault(name, new Variant(Build.WAR, List.of())); // else the product
                round.addAll(cost.runs(runs, name, sessions, variant.war(), variant.jvm()));
            }
        }
        // Each round starts one variant later: the first run of a round came out slowest of its round (the
        // product's, in three runs of 2026-12-04, whatever ran before it), and that must not always be one variant's.
        for (int number = 0; number < options.getInt("repeat", 1); number++) {
            for (int i = 0; i < round.size(); i++) {
                if (number == 0 && i == 0) {
                    continue; // the product's first run was the concurrency sweep's
                }
                report.addAll(round.get((i + number) % round.size()).call());
            }
        }
    }

    /**
     * The variants {@link #inRounds} runs, read before anything runs, so that a mistyped --compare or --latency-of
     * costs nothing.
     */
    private Map<String, Variant> variants() {
        Map<String, Variant> variants = new LinkedHashMap<>();
        Path dir = stack.settings.stackDir();
        if (runs("dedup-off")) {
            variants.put(
                    DEDUP_OFF,
                    new Variant(
                            ContainerRuns.benchWar(dir, BenchShortcut.class, "EventProcessor", "apply"), List.of()));
        }
        if (runs("outbox-off")) {
            variants.put(
                    OUTBOX_OFF,
                    new Variant(ContainerRuns.benchWar(dir, OutboxOff.class, "EventProcessor", "apply"), List.of()));
        }
        if (runs("bare")) {
            report.compared(BARE);
        }
        if (runs("camel")) {
            for (CamelPeer.Variant peer : CamelPeer.Variant.values()) {
                report.peer(peer.label);
            }
        }
        String compare = options.get("compare", "");
        for (String variant : compare.isBlank() ? new String[0] : compare.split("\\|")) {
            int equals = variant.indexOf('=');
            if (equals < 1) {
                throw new IllegalArgumentException("--compare: " + variant + " is not label=options");
            }
            String label = variant.substring(0, equals).trim();
            List<String> tokens = new ArrayList<>(BenchStack.split(variant.substring(equals + 1)));
            Path war = tokens.stream()
                    .filter(token -> token.startsWith("war:"))
                    .map(token -> Path.of(token.substring(4)))
                    .findFirst()
                    .orElse(Build.WAR);
            tokens.removeIf(token -> token.startsWith("war:"));
            tokens.replaceAll(
                    token -> token.equals(TRACED) ? "-Dotel.exporter.otlp.endpoint=" + otlp().endpoint() : token);
            variants.put(COMPARED + label, new Variant(war, tokens));
            report.compared(COMPARED + label);
        }
        if (options.has("baseline")) {
            String label = options.get("baseline", "");
            if (!variants.containsKey(COMPARED + label)) {
                throw new IllegalArgumentException("--baseline " + label + ": no such --compare label");
            }
            report.baseline(COMPARED + label);
        }
        return variants;
    }

    /**
     * The receiver the {@code traced} variants export to, started with the first: every span Payara makes crosses
     * loopback as it would to a collector, and is counted, not kept.
     */
    private OtlpReceiver otlp() {
        if (otlp == null) {
            try {
                otlp = OtlpReceiver.counting();
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }
        return otlp;
    }

    private static List<String> jvmOf(Map<String, Variant> variants, String label) {
        Variant variant = variants.get(COMPARED + label);
        if (variant == null) {
            throw new IllegalArgumentException("--latency-of " + label + ": no such --compare label");
        }
        return variant.jvm();
    }

    /** The IDs the set's events carry: {@code v7} for producers that assign time-ordered IDs, which the table by ID drops by day. */
    private static MessageSet.Ids ids(String kind) {
        return switch (kind) {
            case "v4" -> MessageSet.Ids.RANDOM;
            case "v7" -> MessageSet.Ids.TIME_ORDERED;
            default -> throw new IllegalArgumentException("--ids v4|v7, not " + kind);
        };
    }

    private MessageSet messageSet(MessageSet.Ids ids) {
        return MessageSet.of(
                "bench-",
                options.getLong("seed", 42),
                options.getInt("messages", 20_000),
                options.getDouble("duplicates", 0.2),
                options.getInt("accounts", 1000),
                0,
                ids);
    }

    /**
     * The set sent to a scratch queue and received back twice, before any measured run: otherwise whichever variant
     * runs first pays for the broker's JIT compilation and fresh journal files, and a ratio between two variants
     * depends on their order. Received as the consumer receives: a non-transacted session that acknowledges each
     * message, with the consumer's window, so that the broker's delivery and acknowledgement paths are warm too.
     */
    private void warmBroker() throws Exception {
        long start = System.nanoTime();
        Settings settings = stack.settings;
        ActiveMQConnectionFactory factory = new ActiveMQConnectionFactory(
                settings.brokerUrl(), settings.get("BROKER_OPERATOR_USER"), settings.get("BROKER_OPERATOR_PASSWORD"));
        factory.setConsumerWindowSize(settings.getInt("CONSUMER_WINDOW_BYTES"));
        try (var connection = factory.createConnection()) {
            connection.start();
            Session sending = connection.createSession(true, Session.SESSION_TRANSACTED);
            Session receiving = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Queue scratch = sending.createQueue("bench.warmup");
            MessageProducer producer = sending.createProducer(scratch);
            MessageConsumer consumer = receiving.createConsumer(scratch);
            for (int round = 0; round < 2; round++) {
                for (MessageSet.Event e : messages.events()) {
                    producer.send(sending.createTextMessage(e.json()));
                }
                sending.commit();
                for (int i = 0; i < messages.events().size(); i++) {
                    if (consumer.receive(10_000) == null) {
                        throw new IllegalStateException("broker warm-up: message " + i + " not received");
                    }
                }
            }
        }
        System.out.printf(
                Locale.ROOT,
                "  (broker warmed up: the set sent and received twice in %.0f s)%n",
                (System.nanoTime() - start) / 1e9);
    }

    /**
     * One Payara Micro started, given the set to drain and publish, and stopped before any measured run. The first
     * start of a run reads Payara's and the WAR's files from disk (a start that took 25 s against 14 s for the next),
     * and the first pass the broker serves pays for its own warm-up (0.58 ms of broker CPU per message where every
     * later pass took 0.22-0.36, though the set had gone through it twice already): neither is a property of the
     * variant that happens to come first. Nothing of the JVM is kept: every measured run starts its own.
     */
    private void warmFileCache() throws Exception {
        long start = System.nanoTime();
        stack.freshSchema();
        stack.preload(messages);
        // It also writes the class-data-sharing archive as it stops, for the variants that map it (--compare cds).
        try (PayaraMicroProcess micro =
                PayaraMicroProcess.start("bench-file-cache", stack.settings, Build.WAR, List.of(), true, List.of())) {
            micro.awaitReady(Duration.ofMinutes(3));
            long deadline = System.nanoTime() + Duration.ofMinutes(10).toNanos();
            while (stack.broker().messageCount(stack.queue()) > 0 || stack.unsentAnnouncements() > 0) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("the unmeasured pass did not drain; see " + micro.log());
                }
                Thread.sleep(100);
            }
        }
        stack.announcements().reset();
        System.out.printf(
                Locale.ROOT,
                "  (Payara started, drained the set and stopped once, unmeasured, in %.0f s)%n",
                (System.nanoTime() - start) / 1e9);
    }

    /** --only limits the run to the product and these; --skip-big drops the 10M rows. */
    private boolean runs(String part) {
        if (part.equals("big") && options.has("skip-big")) {
            return false;
        }
        return !options.has("only") || options.getList("only", "").contains(part);
    }
}

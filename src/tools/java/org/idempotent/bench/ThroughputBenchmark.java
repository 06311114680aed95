package org.idempotent.bench;

import jakarta.enterprise.inject.spi.Extension;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.Queue;
import jakarta.jms.Session;
import jakarta.json.JsonObject;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.activemq.artemis.jms.client.ActiveMQConnectionFactory;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.configuration.FluentConfiguration;
import org.flywaydb.database.postgresql.PostgreSQLConfigurationExtension;
import org.idempotent.loadgen.PaymentProducer;
import org.idempotent.payment.control.PaymentProcessor;
import org.idempotent.stack.AdminClient;
import org.idempotent.stack.BrokerProcess;
import org.idempotent.stack.Build;
import org.idempotent.stack.Commands;
import org.idempotent.stack.Database;
import org.idempotent.stack.FreePort;
import org.idempotent.stack.PayaraMicroProcess;
import org.idempotent.stack.PostgresCluster;
import org.idempotent.stack.Settings;
import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.asset.StringAsset;
import org.jboss.shrinkwrap.api.exporter.ZipExporter;
import org.jboss.shrinkwrap.api.spec.WebArchive;

/**
 * The consumer against its physical ceilings, side by side in one run on one machine, with one broker configuration,
 * one database and one seeded message set: {@code mvn -Pbench [-Dbench.args="..."]}.
 *
 * <ul>
 *   <li>DB ceiling: the product's transaction (INSERT processed_events, rolled back on a unique violation, else the
 *       guarded upsert) issued over JDBC by N threads;
 *   <li>container ceiling: the deployed path with the database work switched off ({@link BenchShortcut} on the
 *       consumer's onMessage): the MDB receives, parses, validates and acknowledges;
 *   <li>product: the full path at each concurrency (CONSUMER_MAX_SESSIONS);
 *   <li>dedup off: the full path without the processed_events insert ({@link BenchShortcut} on
 *       PaymentProcessor.apply), at the product's best concurrency;
 *   <li>outbox off: the full path without the announcement ({@link OutboxOff} on PaymentProcessor.apply), at the
 *       product's best concurrency; the product's own runs are timed until its relay has published everything too;
 *   <li>announcement latency: at the product's best concurrency, the message set sent at half its warm rate, and the
 *       time from each payment's commit to its announcement's arrival at a subscriber ({@link AnnouncementClock});
 *   <li>cost growth: the product at its best concurrency with 10,000,000 rows already in processed_events, once with
 *       random (v4) and once with time-ordered (v7) event IDs.
 * </ul>
 *
 * Every container run starts from a fresh database with the whole message set preloaded into the queue before Payara
 * Micro starts, and is timed by the broker's own count of unacknowledged messages, from the first acknowledgement to
 * the last. Every run checks the balances. Prints a table and the ratios; writes a CSV and a PNG chart to target/bench.
 */
public final class ThroughputBenchmark {

    /**
     * One measured run; {@code fromJvmStart}: seconds from the start of Payara's JVM to the last acknowledgement, for
     * a pass that began with the JVM (0 otherwise).
     */
    record Result(String variant, int concurrency, int messages, double seconds, String check, double fromJvmStart) {

        double rate() {
            return messages / seconds;
        }
    }

    private static final Path OUT = Path.of("target", "bench");
    /** Flyway logs every migration at INFO, once per run here; kept referenced so the level sticks. */
    private static final java.util.logging.Logger FLYWAY = java.util.logging.Logger.getLogger("org.flywaydb");

    /** Suffix of the variant names of the first pass of each container run. */
    private static final String COLD = ", cold start";
    /** The product's run on a broker that has just started, not warmed up. */
    private static final String FRESH_BROKER = "product, fresh broker";
    /**
     * Prefix of the --compare variants' names. Their options are Payara's JVM options, but java:PATH runs it on that
     * java binary, war:PATH deploys that WAR (the product as it was before a change, say).
     */
    private static final String COMPARED = "compared: ";
    /** Producers of a paced pass, each sending its share of the set on the same schedule. */
    private static final int PRODUCERS = 4;
    /** Expired dedup records purged during the second paced pass. */
    private static final int EXPIRED_ROWS = 1_000_000;

    private final Settings settings;
    private final PostgresCluster postgres;
    private final Map<String, String> options;
    private final Messages v4;
    private final List<Result> results = new ArrayList<>();
    private BrokerProcess broker;
    private AnnouncementClock announcements;
    private double peakHeapMib;
    /** JVM options for the next container runs, after --payara-jvm's (the heap sweep). */
    private List<String> extraJvm = List.of();
    /** The --compare variants' names, in order. */
    private final List<String> compared = new ArrayList<>();

    private double peakRssMib;
    /** What the paced passes printed, for the summary. */
    private final List<String> latencies = new ArrayList<>();

    private CommitLatency.Latencies latencyTarget;
    private CommitLatency.Latencies latencyDuringPurge;
    private double offeredRate;
    /** The measured window of the profiled run. */
    private Instant profiledFrom;

    private Instant profiledTo;

    private ThroughputBenchmark(Settings settings, Map<String, String> options, PostgresCluster postgres) {
        this.settings = settings;
        this.postgres = postgres;
        this.options = options;
        this.v4 = Messages.generate(
                intOption("messages", 20_000),
                Double.parseDouble(options.getOrDefault("duplicates", "0.2")),
                intOption("accounts", 1000),
                Long.parseLong(options.getOrDefault("seed", "42")),
                false);
    }

    public static void main(String[] args) throws Exception {
        FLYWAY.setLevel(java.util.logging.Level.WARNING);
        Map<String, String> options = options(args);
        Settings settings = Settings.fromEnvironment()
                .with("DB_NAME", "payments_bench")
                .with("PAYMENTS_QUEUE", "payments")
                .withFreeBrokerPorts()
                .with("HTTP_PORT", String.valueOf(FreePort.find()))
                .with("DB_POOL_MAX", "24")
                .with("STACK_DIR", OUT.resolve("stack").toAbsolutePath().toString());
        // A cluster of its own: commit timestamps on (the latency pass reads them), the machine's cluster untouched,
        // and PostgreSQL's CPU that of this cluster's processes alone.
        try (PostgresCluster postgres = PostgresCluster.create(
                OUT.resolve("postgres").toAbsolutePath(), List.of("track_commit_timestamp = on"))) {
            new ThroughputBenchmark(postgres.serve(settings), options, postgres).run();
        }
    }

    private void run() throws Exception {
        Files.createDirectories(settings.stackDir());
        Files.deleteIfExists(OUT.resolve("product.jfr"));
        int[] concurrency = Arrays.stream(
                        options.getOrDefault("concurrency", "1,2,4,8,16").split(","))
                .mapToInt(Integer::parseInt)
                .toArray();
        System.out.printf(
                "Message set: %d messages, %d distinct events, %d accounts, seed %s%n",
                v4.all().size(), v4.distinctCount(), v4.expected().size(), options.getOrDefault("seed", "42"));
        startBroker();
        try {
            warmBroker(v4);
            warmFileCache();
            if (runs("db")) {
                for (int n : concurrency) {
                    results.add(dbCeiling(n));
                }
            }
            if (runs("container")) {
                Path shortcutWar = benchWar(BenchShortcut.class, "PaymentConsumer", "onMessage");
                for (int n : concurrency) {
                    results.addAll(container("container ceiling", n, shortcutWar, v4, false));
                }
            }
            for (int n : concurrency) {
                results.addAll(container("product", n, Build.WAR, v4, false));
            }
            int best = best("product").concurrency();
            if (runs("dedup-off")) {
                results.addAll(container(
                        "dedup off", best, benchWar(BenchShortcut.class, "PaymentProcessor", "apply"), v4, false));
            }
            if (runs("big")) {
                long rows = Long.parseLong(options.getOrDefault("big-rows", "10000000"));
                results.addAll(container("product, 10M rows, v4 IDs", best, Build.WAR, v4, true, rows));
                Messages v7 = Messages.generate(
                        v4.all().size(),
                        Double.parseDouble(options.getOrDefault("duplicates", "0.2")),
                        v4.expected().size(),
                        Long.parseLong(options.getOrDefault("seed", "42")),
                        true);
                results.addAll(container("product, 10M rows, v7 IDs", best, Build.WAR, v7, true, rows));
            }
            if (runs("outbox-off")) {
                results.addAll(container(
                        "outbox off", best, benchWar(OutboxOff.class, "PaymentProcessor", "apply"), v4, false));
            }
            if (options.containsKey("heaps")) {
                for (String heap : options.get("heaps").split(",")) {
                    extraJvm = List.of("-Xmx" + heap);
                    results.addAll(container("product, -Xmx" + heap, best, Build.WAR, v4, false));
                }
                extraJvm = List.of();
            }
            if (options.containsKey("compare")) {
                // label=options|label=options: the product again with each, beside its default run.
                for (String variant : options.get("compare").split("\\|")) {
                    int equals = variant.indexOf('=');
                    List<String> tokens = new ArrayList<>(
                            List.of(variant.substring(equals + 1).trim().split(" +")));
                    Path war = tokens.stream()
                            .filter(token -> token.startsWith("war:"))
                            .map(token -> Path.of(token.substring(4)))
                            .findFirst()
                            .orElse(Build.WAR);
                    tokens.removeIf(token -> token.startsWith("war:"));
                    extraJvm = tokens;
                    String label = COMPARED + variant.substring(0, equals).trim();
                    compared.add(label);
                    results.addAll(container(label, best, war, v4, false));
                }
                extraJvm = List.of();
            }
            if (runs("latency")) {
                paced(best, best("product").rate() / 2);
            }
            if (runs("fresh-broker")) {
                // Last: every other variant runs against the warmed broker.
                restartBroker();
                results.addAll(container(FRESH_BROKER, best, Build.WAR, v4, false));
            }
        } finally {
            announcements.close();
            broker.stop(Duration.ofSeconds(30));
        }
        report();
    }

    /** A new broker on an empty journal (an interrupted earlier run leaves its messages there), and a subscriber. */
    private void startBroker() throws Exception {
        Path brokerDir = settings.stackDir().resolve("broker-run");
        Commands.deleteRecursively(brokerDir);
        broker = BrokerProcess.startWithJmx(settings.with("STACK_DIR", brokerDir.toString()), false, FreePort.find());
        announcements = new AnnouncementClock(settings);
    }

    /** As after a full restart: the broker's JVM is new, its journal files too, nothing of it is compiled. */
    private void restartBroker() throws Exception {
        announcements.close();
        broker.stop(Duration.ofSeconds(30));
        startBroker();
    }

    /**
     * The set sent to a scratch queue and received back twice, before any measured run: otherwise whichever variant
     * runs first pays for the broker's JIT compilation and fresh journal files, and a ratio between two variants
     * depends on their order.
     */
    private void warmBroker(Messages messages) throws Exception {
        long start = System.nanoTime();
        ActiveMQConnectionFactory factory = new ActiveMQConnectionFactory(
                settings.brokerUrl(), settings.get("BROKER_OPERATOR_USER"), settings.get("BROKER_OPERATOR_PASSWORD"));
        try (var connection = factory.createConnection()) {
            connection.start();
            Session session = connection.createSession(true, Session.SESSION_TRANSACTED);
            Queue scratch = session.createQueue("bench.warmup");
            MessageProducer producer = session.createProducer(scratch);
            MessageConsumer consumer = session.createConsumer(scratch);
            for (int round = 0; round < 2; round++) {
                for (Messages.Event e : messages.all()) {
                    producer.send(
                            session.createTextMessage(PaymentProducer.json(e.id(), e.account(), e.amountCents())));
                }
                session.commit();
                for (int i = 0; i < messages.all().size(); i++) {
                    if (consumer.receive(10_000) == null) {
                        throw new IllegalStateException("broker warm-up: message " + i + " not received");
                    }
                }
                session.commit();
            }
        }
        System.out.printf(
                Locale.ROOT,
                "  (broker warmed up: the set sent and received twice in %.0f s)%n",
                (System.nanoTime() - start) / 1e9);
    }

    /**
     * One Payara Micro started and stopped before any measured run: the first start of a run reads Payara's and the
     * WAR's files from disk (a start that took 25 s against 14 s for the next), which is no property of the variant
     * that happens to come first. Nothing of the JVM is kept: every measured run starts its own.
     */
    private void warmFileCache() throws Exception {
        long start = System.nanoTime();
        freshSchema();
        try (PayaraMicroProcess micro = PayaraMicroProcess.start("bench-file-cache", settings, Build.WAR, false)) {
            micro.awaitReady(Duration.ofMinutes(3));
        }
        System.out.printf(
                Locale.ROOT,
                "  (Payara started and stopped once, unmeasured, in %.0f s)%n",
                (System.nanoTime() - start) / 1e9);
    }

    private Result dbCeiling(int threads) throws Exception {
        freshSchema();
        AtomicInteger next = new AtomicInteger();
        List<Messages.Event> all = v4.all();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        long backends = CpuTime.childrenOf(postgres.postmasterPid());
        double postgresCpu = CpuTime.ofPostgres(postgres.postmasterPid());
        long start = System.nanoTime();
        List<Future<?>> done = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            done.add(pool.submit(() -> {
                try (Connection db = Database.connect(settings);
                        PreparedStatement insert = db.prepareStatement(
                                "INSERT INTO processed_events (event_id, fingerprint) VALUES (?, ?)");
                        PreparedStatement upsert = db.prepareStatement(PaymentProcessor.GUARDED_UPSERT
                                .replace("?1", "?")
                                .replace("?2", "?")
                                .replace("?3", "?"))) {
                    db.setAutoCommit(false);
                    for (int i = next.getAndIncrement(); i < all.size(); i = next.getAndIncrement()) {
                        Messages.Event e = all.get(i);
                        try {
                            insert.setObject(1, e.id());
                            insert.setBytes(2, e.fingerprint());
                            insert.executeUpdate();
                        } catch (SQLException duplicate) {
                            if (!"23505".equals(duplicate.getSQLState())) {
                                throw duplicate;
                            }
                            db.rollback();
                            continue;
                        }
                        upsert.setString(1, e.account());
                        upsert.setLong(2, e.amountCents());
                        upsert.setObject(3, e.id());
                        upsert.executeUpdate();
                        db.commit();
                    }
                }
                return null;
            }));
        }
        for (Future<?> f : done) {
            f.get();
        }
        pool.shutdown();
        double seconds = (System.nanoTime() - start) / 1e9;
        // A closed connection's backend exits a moment later: its CPU counts once it has (the postmaster's children).
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (CpuTime.childrenOf(postgres.postmasterPid()) > backends && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        System.out.printf(
                Locale.ROOT,
                "    CPU per message: PostgreSQL %.2f ms%n",
                (CpuTime.ofPostgres(postgres.postmasterPid()) - postgresCpu) / all.size());
        return print(new Result("DB ceiling (JDBC)", threads, all.size(), seconds, checkBalances(v4), 0));
    }

    private List<Result> container(String variant, int sessions, Path war, Messages messages, boolean big)
            throws Exception {
        return container(variant, sessions, war, messages, big, 0);
    }

    /**
     * Two passes over the same preloaded message set on one Payara Micro instance: first as it starts (cold: the JIT
     * compiles the whole path while it consumes), then, with the queue paused, the database reset and the set
     * preloaded again, once the queue resumes (warm: what a consumer that has been running does).
     */
    private List<Result> container(String variant, int sessions, Path war, Messages messages, boolean big, long bigRows)
            throws Exception {
        freshSchema();
        if (big) {
            prefill(bigRows);
        }
        preload(messages);
        announcements.reset(); // what an earlier variant's run left arriving
        Settings instance = settings.with("CONSUMER_MAX_SESSIONS", String.valueOf(sessions));
        List<String> jvm = new ArrayList<>();
        if (options.containsKey("payara-jvm")) {
            jvm.addAll(List.of(options.get("payara-jvm").split(" ")));
        }
        jvm.addAll(extraJvm);
        boolean profiled = options.containsKey("jfr") && variant.equals("product") && sessions == intOption("jfr", 8);
        if (profiled) {
            jvm.add("-XX:StartFlightRecording=filename="
                    + OUT.resolve("product.jfr").toAbsolutePath() + ",settings=profile,dumponexit=true");
        }
        Path java = jvm.stream()
                .filter(option -> option.startsWith("java:"))
                .map(option -> Path.of(option.substring(5)))
                .findFirst()
                .orElse(null);
        jvm.removeIf(option -> option.startsWith("java:"));
        String queue = settings.get("PAYMENTS_QUEUE");
        long jvmStart = System.nanoTime();
        try (PayaraMicroProcess micro = PayaraMicroProcess.start("bench-" + sessions, instance, war, false, java, jvm);
                HeapSampler heap = new HeapSampler(micro)) {
            Instant coldStart = Instant.now();
            Result cold = drain(variant + COLD, sessions, messages, micro, false, jvmStart);
            printMemory(micro, heap);
            broker.pause(queue);
            try (Connection db = Database.connect(settings);
                    Statement sql = db.createStatement()) {
                sql.execute("TRUNCATE accounts, payment_announcements");
                try (PreparedStatement delete =
                        db.prepareStatement("DELETE FROM processed_events WHERE processed_at >= ?")) {
                    delete.setObject(1, coldStart.atOffset(ZoneOffset.UTC));
                    delete.executeUpdate();
                }
            }
            preload(messages);
            broker.resume(queue);
            Result warm = drain(variant, sessions, messages, micro, profiled, 0);
            printMemory(micro, heap);
            return List.of(cold, warm);
        }
    }

    /**
     * Times the queue from the first acknowledgement to the last, by the broker's own count, and checks the result;
     * also from {@code jvmStart} (System.nanoTime() before Payara's JVM was started) to the last, unless it is 0.
     */
    private Result drain(
            String variant, int sessions, Messages messages, PayaraMicroProcess micro, boolean profiled, long jvmStart)
            throws Exception {
        long total = messages.all().size();
        long first = 0;
        long counted = total;
        long last;
        double[] cpuAtFirst = null;
        long deadline = System.nanoTime() + Duration.ofMinutes(20).toNanos();
        while (true) {
            long waiting = broker.messageCount(settings.get("PAYMENTS_QUEUE"));
            long now = System.nanoTime();
            if (first == 0 && waiting < total) {
                first = now;
                // The clock starts here: only the messages still waiting now are counted against it.
                counted = waiting;
                cpuAtFirst = cpu(micro);
                if (profiled) {
                    profiledFrom = Instant.now();
                }
            }
            if (waiting == 0 && (!announces(variant) || unsent() == 0)) {
                last = now;
                printCpu(cpuAtFirst, cpu(micro), counted);
                if (profiled) {
                    profiledTo = Instant.now();
                }
                break;
            }
            if (now > deadline) {
                throw new IllegalStateException(
                        variant + ": " + waiting + " messages still waiting; see " + micro.log());
            }
            Thread.sleep(20);
        }
        String check;
        if (announces(variant)) {
            long announced = awaitAnnouncements(messages.distinctCount());
            check = checkBalances(messages)
                    + (announced == messages.distinctCount()
                            ? ", each announced once"
                            : ", WRONG: " + announced + " announced of " + messages.distinctCount());
        } else if (variant.startsWith("container ceiling")) {
            check = accounts() == 0 ? "no database effect" : "WRONG: database touched";
        } else if (variant.startsWith("dedup off")) {
            check = "not checked: without dedup duplicates are applied twice";
        } else {
            check = checkBalances(messages);
        }
        return print(new Result(
                variant,
                sessions,
                (int) counted,
                (last - first) / 1e9,
                check,
                jvmStart == 0 ? 0 : (last - jvmStart) / 1e9));
    }

    /** Payara's peak used heap (sampled) and peak resident set (the kernel's high-water mark) since it started. */
    private void printMemory(PayaraMicroProcess micro, HeapSampler heap) {
        double rss = CpuTime.peakRssMib(micro.pid());
        peakHeapMib = Math.max(peakHeapMib, heap.peakMib());
        peakRssMib = Math.max(peakRssMib, rss);
        System.out.printf(
                Locale.ROOT, "    Payara memory so far: peak heap %.0f MiB, peak RSS %.0f MiB%n", heap.peakMib(), rss);
    }

    /** The product's own runs: their time includes the relay's, and every applied event must be announced. */
    private static boolean announces(String variant) {
        return variant.startsWith("product");
    }

    private long unsent() throws SQLException {
        try (Connection db = Database.connect(settings);
                PreparedStatement query =
                        db.prepareStatement("SELECT count(*) FROM payment_announcements WHERE sent_at IS NULL");
                ResultSet row = query.executeQuery()) {
            row.next();
            return row.getLong(1);
        }
    }

    /** Announcements that arrived since the last reset, once {@code expected} have or nothing more comes. */
    private long awaitAnnouncements(long expected) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (announcements.received() < expected && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        Thread.sleep(500); // anything beyond the expected count would be a copy
        return announcements.reset();
    }

    /**
     * The message set sent at {@code rate} messages a second to a warm instance (after one unmeasured pass over the
     * same set): each payment's time from its send to its commit, and each announcement's from commit to arrival.
     * Then again, with 1,000,000 expired dedup records purged (the admin call) while the set is sent: the send-to-commit
     * times of the messages sent during the purge.
     */
    private void paced(int sessions, double rate) throws Exception {
        freshSchema();
        preload(v4);
        announcements.reset();
        Path gcLog = OUT.resolve("paced-gc.log");
        try (PayaraMicroProcess micro = PayaraMicroProcess.start(
                "bench-paced",
                settings.with("CONSUMER_MAX_SESSIONS", String.valueOf(sessions)),
                Build.WAR,
                false,
                null,
                List.of(GcPauses.option(gcLog)))) {
            drain("product, paced warm-up" + COLD, sessions, v4, micro, false, 0);
            Instant from = Instant.now();
            CommitLatency.Measured plain = pacedPass(rate, micro, null).between(settings, null, null);
            latencyTarget = plain.total();
            latencies.add(String.format(
                    Locale.ROOT,
                    "send -> commit at %.0f msg/s offered (half the warm rate %.0f at" + " N=%d): %s; %s",
                    offeredRate,
                    rate * 2,
                    sessions,
                    latencyTarget,
                    GcPauses.between(gcLog, from, Instant.now())));
            latencies.add("  of which " + plain.split());
            latencies.add("commit -> announcement, the same pass: " + announcements.percentiles());
            Instant[] purge = new Instant[2];
            CommitLatency.Measured purged = pacedPass(rate, micro, purge).between(settings, purge[0], purge[1]);
            latencyDuringPurge = purged.total();
            latencies.add(String.format(
                    Locale.ROOT,
                    "send -> commit at %.0f msg/s offered, sent during the purge of"
                            + " %,d expired rows (%.1f s): %s; %s",
                    offeredRate,
                    EXPIRED_ROWS,
                    Duration.between(purge[0], purge[1]).toMillis() / 1e3,
                    latencyDuringPurge,
                    GcPauses.between(gcLog, purge[0], purge[1])));
            latencies.add("  of which " + purged.split());
            latencies.forEach(line -> System.out.println("  " + line));
        }
    }

    /**
     * One paced pass over the set on a running instance, from an empty ledger; with {@code purge} given, 1,000,000
     * expired dedup records in the table and their purge started a fifth into the pass (its start and end put there).
     */
    private CommitLatency pacedPass(double rate, PayaraMicroProcess micro, Instant[] purge) throws Exception {
        try (Connection db = Database.connect(settings);
                Statement sql = db.createStatement()) {
            sql.execute("TRUNCATE accounts, payment_announcements, processed_events");
            if (purge != null) {
                sql.execute("INSERT INTO processed_events (event_id, processed_at) SELECT gen_random_uuid(), now() - "
                        + "interval '30 days' + i * interval '1 millisecond' FROM generate_series(1, " + EXPIRED_ROWS
                        + ") i");
                sql.execute("VACUUM ANALYZE processed_events");
            }
        }
        announcements.reset();
        CommitLatency latency = new CommitLatency();
        CompletableFuture<Void> purging = purge == null
                ? CompletableFuture.completedFuture(null)
                : CompletableFuture.runAsync(
                        () -> purge(micro, purge),
                        CompletableFuture.delayedExecutor(
                                (long) (v4.all().size() / 5 / rate * 1000), TimeUnit.MILLISECONDS));
        List<Messages.Event> all = v4.all();
        long start = System.nanoTime();
        // Message i is due at start + i / rate. A synchronous persistent send waits for the broker's journal; one
        // producer alone falls behind the rate, so several share the set, each sending every PRODUCERS-th message.
        ExecutorService producers = Executors.newFixedThreadPool(PRODUCERS);
        List<Future<?>> sending = new ArrayList<>();
        for (int p = 0; p < PRODUCERS; p++) {
            int first = p;
            sending.add(producers.submit(() -> {
                try (PaymentProducer producer = new PaymentProducer(settings, settings.get("PAYMENTS_QUEUE"))) {
                    for (int i = first; i < all.size(); i += PRODUCERS) {
                        long due = start + (long) (i * 1e9 / rate);
                        while (System.nanoTime() < due) {
                            java.util.concurrent.locks.LockSupport.parkNanos(due - System.nanoTime());
                        }
                        Messages.Event e = all.get(i);
                        latency.sending(e.id());
                        producer.sendText(PaymentProducer.json(e.id(), e.account(), e.amountCents()));
                    }
                }
                return null;
            }));
        }
        for (Future<?> done : sending) {
            done.get();
        }
        producers.shutdown();
        offeredRate = all.size() / ((System.nanoTime() - start) / 1e9);
        long deadline = System.nanoTime() + Duration.ofMinutes(5).toNanos();
        while ((broker.messageCount(settings.get("PAYMENTS_QUEUE")) > 0 || unsent() > 0)
                && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        while (announcements.received() < v4.distinctCount() && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        purging.get(5, TimeUnit.MINUTES);
        checkBalances(v4);
        return latency;
    }

    /** The purge by the admin call, which returns when it is done; it must have deleted exactly the expired rows. */
    private void purge(PayaraMicroProcess micro, Instant[] window) {
        AdminClient admin = AdminClient.as(micro, settings.get("ADMIN_USER"), settings.get("ADMIN_PASSWORD"));
        window[0] = Instant.now();
        JsonObject run = admin.postJson("/admin/retention/purge");
        window[1] = Instant.now();
        if (run.getJsonNumber("rowsDeleted").longValue() != EXPIRED_ROWS
                || !"COMPLETED".equals(run.getString("outcome"))) {
            throw new IllegalStateException("the purge did not remove exactly the expired rows: " + run);
        }
    }

    /** CPU milliseconds so far of Payara, the broker and PostgreSQL. */
    private double[] cpu(PayaraMicroProcess micro) {
        return new double[] {
            CpuTime.ofProcess(micro.pid()),
            CpuTime.ofProcess(broker.pid()),
            CpuTime.ofPostgres(postgres.postmasterPid()),
            CpuTime.ofJitCompilers(micro.pid()),
            CpuTime.ofGarbageCollector(micro.pid())
        };
    }

    /** Where the machine's CPU went during the measured window, per message; Payara's JIT and GC threads within it. */
    private static void printCpu(double[] from, double[] to, long messages) {
        System.out.printf(
                Locale.ROOT,
                "    CPU per message: Payara %.2f ms (JIT compiler threads %.2f, GC threads %.2f),"
                        + " broker %.2f ms, PostgreSQL %.2f ms%n",
                (to[0] - from[0]) / messages,
                (to[3] - from[3]) / messages,
                (to[4] - from[4]) / messages,
                (to[1] - from[1]) / messages,
                (to[2] - from[2]) / messages);
    }

    /**
     * A copy of the product WAR with a benchmark interceptor bound to one method: of an EJB by an ejb-jar.xml, of
     * PaymentProcessor (a CDI bean, only {@code apply}) by the {@link BindToApply} extension.
     */
    private Path benchWar(Class<?> interceptor, String bean, String method) {
        Path war = settings.stackDir().resolve("bench-" + interceptor.getSimpleName() + "-" + bean + ".war");
        WebArchive copy = ShrinkWrap.createFromZipFile(WebArchive.class, Build.WAR.toFile())
                .addClass(interceptor);
        if (bean.equals(PaymentProcessor.class.getSimpleName()) && method.equals("apply")) {
            copy.addClasses(BenchBinding.class, BenchBinding.Literal.class, BindToApply.class)
                    .addAsServiceProvider(Extension.class, BindToApply.class);
        } else {
            copy.addAsWebInfResource(
                    new StringAsset("""
                    <ejb-jar xmlns="https://jakarta.ee/xml/ns/jakartaee" version="4.0">
                        <interceptors><interceptor><interceptor-class>%1$s</interceptor-class></interceptor></interceptors>
                        <assembly-descriptor>
                            <interceptor-binding>
                                <ejb-name>%2$s</ejb-name>
                                <interceptor-class>%1$s</interceptor-class>
                                <method><method-name>%3$s</method-name></method>
                            </interceptor-binding>
                        </assembly-descriptor>
                    </ejb-jar>""".formatted(interceptor.getName(), bean, method)), "ejb-jar.xml");
        }
        copy.as(ZipExporter.class).exportTo(war.toFile(), true);
        return war;
    }

    private void freshSchema() throws SQLException {
        Database.recreate(settings);
        FluentConfiguration flyway = Flyway.configure(ThroughputBenchmark.class.getClassLoader())
                .dataSource(settings.jdbcUrl(), settings.get("DB_OWNER_USER"), settings.get("DB_OWNER_PASSWORD"))
                .locations("classpath:db/migration");
        flyway.getConfigurationExtension(PostgreSQLConfigurationExtension.class).setTransactionalLock(false);
        flyway.load().migrate();
    }

    /** Dedup records of a long busy past: random (v4) IDs spread over the last 10 days. */
    private void prefill(long rows) throws SQLException {
        long start = System.nanoTime();
        try (Connection db = Database.connect(settings);
                Statement sql = db.createStatement()) {
            sql.execute("INSERT INTO processed_events (event_id, processed_at) SELECT gen_random_uuid(), "
                    + "now() - random() * interval '10 days' FROM generate_series(1, " + rows + ")");
            sql.execute("VACUUM ANALYZE processed_events");
        }
        System.out.printf("  (prefilled %,d rows in %.0f s)%n", rows, (System.nanoTime() - start) / 1e9);
    }

    private void preload(Messages messages) throws Exception {
        List<Messages.Event> all = messages.all();
        try (PaymentProducer producer = new PaymentProducer(settings, settings.get("PAYMENTS_QUEUE"), true)) {
            for (int i = 0; i < all.size(); i++) {
                Messages.Event e = all.get(i);
                producer.sendText(PaymentProducer.json(e.id(), e.account(), e.amountCents()));
                if (i % 500 == 499) {
                    producer.commit();
                }
            }
            producer.commit();
        }
        long waiting = broker.messageCount(settings.get("PAYMENTS_QUEUE"));
        if (waiting != all.size()) {
            throw new IllegalStateException("preloaded " + waiting + " messages, expected " + all.size());
        }
    }

    private String checkBalances(Messages messages) throws SQLException {
        Map<String, Long> actual = new HashMap<>();
        try (Connection db = Database.connect(settings);
                PreparedStatement query = db.prepareStatement("SELECT id, balance_cents FROM accounts");
                ResultSet rows = query.executeQuery()) {
            while (rows.next()) {
                actual.put(rows.getString(1), rows.getLong(2));
            }
        }
        if (!actual.equals(messages.expected())) {
            throw new IllegalStateException("balances WRONG: " + actual.size() + " accounts, expected "
                    + messages.expected().size());
        }
        return "balances exact";
    }

    private long accounts() throws SQLException {
        try (Connection db = Database.connect(settings);
                PreparedStatement query = db.prepareStatement("SELECT count(*) FROM accounts");
                ResultSet row = query.executeQuery()) {
            row.next();
            return row.getLong(1);
        }
    }

    private static Result print(Result r) {
        System.out.printf(
                Locale.ROOT,
                "  %-38s %3d  %6d msgs %7.2f s %8.0f msg/s  %s%s%n",
                r.variant(),
                r.concurrency(),
                r.messages(),
                r.seconds(),
                r.rate(),
                r.check(),
                r.fromJvmStart() == 0
                        ? ""
                        : String.format(Locale.ROOT, "; JVM start to last acknowledgement %.1f s", r.fromJvmStart()));
        return r;
    }

    private Result best(String variant) {
        return results.stream()
                .filter(r -> r.variant().equals(variant))
                .max((a, b) -> Double.compare(a.rate(), b.rate()))
                .orElseThrow();
    }

    private void report() throws IOException {
        Files.createDirectories(OUT);
        StringBuilder csv = new StringBuilder(
                "variant,concurrency,messages,seconds,messages_per_second,check,seconds_from_jvm_start\n");
        System.out.printf("%n%-40s %5s %12s%n", "variant", "N", "messages/s");
        for (Result r : results) {
            System.out.printf(Locale.ROOT, "%-40s %5d %12.0f%n", r.variant(), r.concurrency(), r.rate());
            // Quoted: variant names and checks contain commas.
            csv.append(String.format(
                    Locale.ROOT,
                    "\"%s\",%d,%d,%.3f,%.1f,\"%s\",%.1f%n",
                    r.variant(),
                    r.concurrency(),
                    r.messages(),
                    r.seconds(),
                    r.rate(),
                    r.check(),
                    r.fromJvmStart()));
        }
        Files.writeString(OUT.resolve("throughput.csv"), csv);
        printRatios("warm: the second pass, what a running consumer does", "");
        printRatios("cold start: the first pass, JIT compilation included", COLD);
        printTargets();
        if (peakRssMib > 0) {
            System.out.printf(
                    Locale.ROOT,
                    "%nPayara memory over all container runs: peak heap %.0f MiB, peak RSS %.0f MiB"
                            + " (JVM options: %s)%n",
                    peakHeapMib,
                    peakRssMib,
                    options.getOrDefault("payara-jvm", "defaults"));
        }
        if (!latencies.isEmpty()) {
            System.out.println("\nLatency, the paced passes:");
            latencies.forEach(line -> System.out.println("  " + line));
        }
        Chart.write(results, OUT.resolve("throughput.png"));
        if (profiledFrom != null && Files.exists(OUT.resolve("product.jfr"))) {
            Profile.summarize(OUT.resolve("product.jfr"), profiledFrom, profiledTo);
        }
        System.out.println("\nWrote " + OUT.resolve("throughput.csv") + " and " + OUT.resolve("throughput.png"));
    }

    /** Cold start against warm, in the same run: the figures an operator meets after a deploy or a restart. */
    private void printTargets() {
        if (!has("product" + COLD)) {
            return;
        }
        System.out.printf(
                "%nCold start (a fresh Payara JVM; each pass's warm figure is the same instance's second pass)%n");
        for (String variant : List.of("product", FRESH_BROKER)) {
            if (!has(variant)) {
                continue;
            }
            Result warm = best(variant);
            Result cold = resultAt(variant + COLD, warm.concurrency());
            target(variant + ", cold / warm, N=" + warm.concurrency(), cold.rate() / warm.rate(), ">=", 0.75);
            target(variant + ", cold msg/s, N=" + warm.concurrency(), cold.rate(), ">=", 1500);
            System.out.printf(
                    Locale.ROOT, "  %-44s %7.1f s%n", variant + ", JVM start to last ack", cold.fromJvmStart());
        }
        for (String variant : compared) {
            Result warm = best(variant);
            target(
                    variant.substring(COMPARED.length()) + " / default, warm",
                    warm.rate() / rateAt("product", warm.concurrency()),
                    ">=",
                    1);
            target(
                    variant.substring(COMPARED.length()) + " / default, cold",
                    rateAt(variant + COLD, warm.concurrency()) / rateAt("product" + COLD, warm.concurrency()),
                    ">=",
                    1);
            System.out.printf(
                    Locale.ROOT,
                    "  %-44s %7.1f s (default %.1f s)%n",
                    variant.substring(COMPARED.length()) + ", JVM start to last ack",
                    resultAt(variant + COLD, warm.concurrency()).fromJvmStart(),
                    resultAt("product" + COLD, warm.concurrency()).fromJvmStart());
        }
        if (latencyTarget != null) {
            System.out.printf("%nLatency, send to commit at half the warm rate%n");
            target("p99, ms", latencyTarget.millisAt(0.99), "<", 20);
            target("p99 during a purge of 1M rows, ms", latencyDuringPurge.millisAt(0.99), "<", 20);
        }
    }

    private static void target(String name, double value, String relation, double bound) {
        boolean met = relation.equals("<") ? value < bound : value >= bound;
        System.out.printf(
                Locale.ROOT,
                "  %-44s %7.2f   target %s %.2f  %s%n",
                name,
                value,
                relation,
                bound,
                met ? "met" : "MISSED");
    }

    /** The ratios over the variants named with {@code suffix}, each at its best concurrency. */
    private void printRatios(String title, String suffix) {
        if (!has("product" + suffix)) {
            return;
        }
        Result product = best("product" + suffix);
        Map<String, double[]> ratios = new LinkedHashMap<>();
        if (has("DB ceiling (JDBC)")) {
            Result db = best("DB ceiling (JDBC)");
            ratios.put("product / DB ceiling", new double[] {product.rate() / db.rate(), 0.70});
            if (has("container ceiling" + suffix)) {
                double container = best("container ceiling" + suffix).rate();
                ratios.put("container ceiling / DB ceiling", new double[] {container / db.rate(), 0.50});
            }
        }
        results.stream()
                .filter(r -> r.variant().equals("dedup off" + suffix))
                .findFirst()
                .ifPresent(off -> ratios.put("dedup on / dedup off", new double[] {
                    rateAt("product" + suffix, off.concurrency()) / off.rate(), 0.85
                }));
        results.stream()
                .filter(r -> r.variant().startsWith("product, -Xmx")
                        && r.variant().endsWith(suffix)
                        && (suffix.isEmpty() ? !r.variant().endsWith(COLD) : true))
                .forEach(sized -> ratios.put(
                        sized.variant().substring("product, ".length()).replace(suffix, "") + " / default heap",
                        new double[] {sized.rate() / rateAt("product" + suffix, sized.concurrency()), 0.95}));
        results.stream()
                .filter(r -> r.variant().equals("outbox off" + suffix))
                .findFirst()
                .ifPresent(off -> ratios.put("outbox on / outbox off", new double[] {
                    rateAt("product" + suffix, off.concurrency()) / off.rate(), 0.85
                }));
        for (String ids : List.of("v4", "v7")) {
            results.stream()
                    .filter(r -> r.variant().equals("product, 10M rows, " + ids + " IDs" + suffix))
                    .forEach(big -> ratios.put("10M rows, " + ids + " IDs / empty", new double[] {
                        big.rate() / rateAt("product" + suffix, big.concurrency()), 0.80
                    }));
        }
        System.out.printf(
                "%nRatios, %s (each variant at its best concurrency; product N=%d)%n", title, product.concurrency());
        ratios.forEach((name, value) -> System.out.printf(
                Locale.ROOT,
                "  %-32s %5.2f   target >= %.2f  %s%n",
                name,
                value[0],
                value[1],
                value[0] >= value[1] ? "met" : "MISSED"));
    }

    private boolean has(String variant) {
        return results.stream().anyMatch(r -> r.variant().equals(variant));
    }

    private double rateAt(String variant, int concurrency) {
        return resultAt(variant, concurrency).rate();
    }

    private Result resultAt(String variant, int concurrency) {
        return results.stream()
                .filter(r -> r.variant().equals(variant) && r.concurrency() == concurrency)
                .findFirst()
                .orElseThrow();
    }

    /** --only db,container,dedup-off,outbox-off,latency,fresh-broker,big limits the run to the product and these; --skip-big drops the 10M rows. */
    private boolean runs(String part) {
        if (part.equals("big") && options.containsKey("skip-big")) {
            return false;
        }
        return !options.containsKey("only")
                || Arrays.asList(options.get("only").split(",")).contains(part);
    }

    private int intOption(String name, int fallback) {
        return Integer.parseInt(options.getOrDefault(name, String.valueOf(fallback)));
    }

    private static Map<String, String> options(String[] args) {
        Map<String, String> options = new HashMap<>();
        for (int i = 0; i < args.length; i++) {
            if (!args[i].startsWith("--")) {
                throw new IllegalArgumentException("usage: --messages N --duplicates F --accounts N --seed N "
                        + "--concurrency 1,2,4,8,16 --big-rows N --skip-big --only db,container,dedup-off,outbox-off,latency,"
                        + "fresh-broker,big --heaps 256m,512m --compare \"label=-XX:... java:/path/bin/java war:/path.war|label=...\" --jfr N "
                        + "--payara-jvm \"-XX:... -XX:...\"");
            }
            options.put(
                    args[i].substring(2), i + 1 < args.length && !args[i + 1].startsWith("--") ? args[++i] : "true");
        }
        return options;
    }

    /** The seeded message set: distinct events plus copies, shuffled; v4 or time-ordered v7 IDs. */
    record Messages(List<Event> all, int distinctCount, Map<String, Long> expected) {

        record Event(UUID id, String account, long amountCents) {

            byte[] fingerprint() {
                return new org.idempotent.payment.entity.PaymentEvent(id, account, amountCents).fingerprint();
            }
        }

        static Messages generate(int count, double duplicates, int accounts, long seed, boolean timeOrdered) {
            Random random = new Random(seed);
            int distinctCount = (int) Math.round(count * (1 - duplicates));
            long millis = System.currentTimeMillis();
            List<Event> distinct = new ArrayList<>();
            for (int i = 0; i < distinctCount; i++) {
                UUID id = timeOrdered ? uuid7(millis + i / 10, random) : uuid4(random);
                distinct.add(new Event(id, "bench-" + random.nextInt(accounts), 1 + random.nextInt(100_000)));
            }
            List<Event> all = new ArrayList<>(distinct);
            while (all.size() < count) {
                all.add(distinct.get(random.nextInt(distinct.size())));
            }
            java.util.Collections.shuffle(all, random);
            Map<String, Long> expected = new HashMap<>();
            distinct.forEach(e -> expected.merge(e.account(), e.amountCents(), Long::sum));
            return new Messages(List.copyOf(all), distinctCount, expected);
        }

        private static UUID uuid4(Random random) {
            long msb = (random.nextLong() & ~0xF000L) | 0x4000L;
            long lsb = (random.nextLong() & 0x3FFFFFFFFFFFFFFFL) | 0x8000000000000000L;
            return new UUID(msb, lsb);
        }

        /** RFC 9562 version 7: 48-bit Unix milliseconds first, so IDs of one period sort together. */
        private static UUID uuid7(long millis, Random random) {
            long msb = (millis << 16) | 0x7000L | (random.nextInt() & 0x0FFF);
            long lsb = (random.nextLong() & 0x3FFFFFFFFFFFFFFFL) | 0x8000000000000000L;
            return new UUID(msb, lsb);
        }
    }
}

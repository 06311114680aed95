package org.idempotent.bench;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.idempotent.loadgen.MessageSet;
import org.idempotent.loadgen.Traffic;
import org.idempotent.stack.BrokerProcess;
import org.idempotent.stack.Commands;
import org.idempotent.stack.Database;
import org.idempotent.stack.FreePort;
import org.idempotent.stack.PostgresCluster;
import org.idempotent.stack.Settings;

/**
 * What every pass of the benchmark runs against: its own PostgreSQL cluster, one broker (restarted for the
 * fresh-broker pass), a subscriber on the announcement queue, and the database work around a pass: a fresh schema,
 * the set preloaded into the queue, the balances checked.
 */
final class BenchStack implements AutoCloseable {

    /** Producers of a preload; each commits its share in batches of this many (one journal sync each). */
    private static final int PRELOAD_PRODUCERS = 2;

    private static final int PRELOAD_BATCH = 500;

    final Settings settings;
    final PostgresCluster postgres;
    /** The broker's GC log, to tell a latency tail that is its collector's. */
    final Path brokerGcLog;

    private BrokerProcess broker;
    private AnnouncementClock announcements;
    /** Whether each pass prints the statements it ran ({@link StatementCounts}, --statements). */
    private boolean countsStatements;
    /** Whether each pass counts the relay's passes ({@link RelayPasses}, --relay-passes). */
    private boolean countsRelayPasses;

    private BenchStack(Settings settings, PostgresCluster postgres, Path brokerGcLog) throws Exception {
        this.settings = settings;
        this.postgres = postgres;
        this.brokerGcLog = brokerGcLog;
        startBroker();
    }

    static BenchStack start(Settings settings, PostgresCluster postgres, Path brokerGcLog) throws Exception {
        return new BenchStack(settings, postgres, brokerGcLog);
    }

    void countStatements() {
        countsStatements = true;
    }

    void countRelayPasses() {
        countsRelayPasses = true;
    }

    /** The statements so far, if this run counts them; null otherwise. */
    StatementCounts.Snapshot statements() throws SQLException {
        return countsStatements ? StatementCounts.take(settings) : null;
    }

    /** The statements' calls and times so far, if this run counts the relay's passes; null otherwise. */
    RelayPasses.Snapshot relayPasses() throws SQLException {
        return countsRelayPasses ? RelayPasses.take(settings) : null;
    }

    /**
     * A setting of the whole cluster (ALTER SYSTEM, then a reload), as the superuser; {@code value} null resets it to
     * the cluster's own (PostgreSQL's default). Returns once a new session shows {@code shown}. The benchmark's own
     * cluster only: the machine's is never touched.
     */
    void clusterSetting(String name, String value, String shown) throws Exception {
        if (!name.matches("[a-z_]+") || (value != null && !value.matches("[a-z0-9]+"))) {
            throw new IllegalArgumentException("not a plain setting: " + name + " = " + value);
        }
        try (Connection db = superuser();
                Statement sql = db.createStatement()) {
            // Checked above: ALTER SYSTEM takes no bind parameters.
            sql.execute(
                    value == null ? "ALTER SYSTEM RESET " + name : "ALTER SYSTEM SET " + name + " = '" + value + "'");
            sql.execute("SELECT pg_reload_conf()");
        }
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (!setting(name).equals(shown)) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(name + " still " + setting(name) + " 10 s after the reload");
            }
            Thread.sleep(50);
        }
    }

    /** What a new session sees: "on" or "off". */
    String autovacuumSetting() throws SQLException {
        return setting("autovacuum");
    }

    private String setting(String name) throws SQLException {
        try (Connection db = superuser();
                PreparedStatement query = db.prepareStatement("SELECT current_setting(?)")) {
            query.setString(1, name);
            try (ResultSet row = query.executeQuery()) {
                row.next();
                return row.getString(1);
            }
        }
    }

    /** To the maintenance database as the cluster's superuser (trust authentication on the loopback). */
    private Connection superuser() throws SQLException {
        return DriverManager.getConnection(settings.jdbcUrl("postgres"), PostgresCluster.SUPERUSER, "");
    }

    /** Autovacuum's analyses of this database's tables since it was made (PostgreSQL's running count). */
    long analyses() throws SQLException {
        return count("SELECT coalesce(sum(autoanalyze_count), 0) FROM pg_stat_user_tables");
    }

    BrokerProcess broker() {
        return broker;
    }

    AnnouncementClock announcements() {
        return announcements;
    }

    String queue() {
        return settings.get("PAYMENTS_QUEUE");
    }

    /** A new broker on an empty journal (an interrupted earlier run leaves its messages there), and a subscriber. */
    private void startBroker() throws Exception {
        Path brokerDir = settings.stackDir().resolve("broker-run");
        Commands.deleteRecursively(brokerDir);
        broker = BrokerProcess.startWithJmx(
                settings.with("STACK_DIR", brokerDir.toString()), false, FreePort.find(), GcPauses.option(brokerGcLog));
        announcements = new AnnouncementClock(settings);
    }

    /** As after a full restart: the broker's JVM is new, its journal files too, nothing of it is compiled. */
    void restartBroker() throws Exception {
        close();
        startBroker();
    }

    void freshSchema() throws SQLException {
        freshSchema(null);
    }

    /**
     * A new database migrated up to {@code version} (null: all of today's migrations), for a WAR of an older commit
     * whose Flyway would refuse a schema newer than its own migrations.
     */
    void freshSchema(String version) throws SQLException {
        freshSchema(version, Optional.empty());
    }

    /** As {@link #freshSchema(String)}, in the dedup layout {@code layout} if given, else the settings'. */
    void freshSchema(String version, Optional<String> layout) throws SQLException {
        Database.recreate(settings);
        Database.migrate(
                layout.map(chosen -> settings.with("DEDUP_PARTITIONING", chosen))
                        .orElse(settings),
                "classpath:db/migration",
                version);
        if (countsStatements || countsRelayPasses) {
            StatementCounts.install(settings);
        }
    }

    /** Dedup records of a long busy past: random (v4) IDs spread over the last 10 days. */
    void prefill(long rows) throws SQLException {
        long start = System.nanoTime();
        sql("INSERT INTO processed_events (event_id, processed_at, id_version) SELECT gen_random_uuid(), "
                + "now() - random() * interval '10 days', 4 FROM generate_series(1, " + rows + ")");
        sql("VACUUM ANALYZE processed_events");
        System.out.printf("  (prefilled %,d rows in %.0f s)%n", rows, (System.nanoTime() - start) / 1e9);
    }

    void sql(String... statements) throws SQLException {
        try (Connection db = Database.connect(settings);
                Statement sql = db.createStatement()) {
            for (String statement : statements) {
                sql.execute(statement);
            }
        }
    }

    /** The whole set into the queue, committed before anything consumes it. */
    void preload(MessageSet messages) throws Exception {
        Traffic.start(settings, messages.items(), PRELOAD_PRODUCERS, PRELOAD_BATCH)
                .await();
        long waiting = broker.messageCount(queue());
        if (waiting != messages.items().size()) {
            throw new IllegalStateException("preloaded " + waiting + " messages, expected "
                    + messages.items().size());
        }
    }

    /**
     * The same set once more, on a running instance: the queue paused, what the last pass applied since {@code since}
     * undone (a prefilled past stays), the set preloaded, the queue resumed.
     */
    void again(MessageSet messages, Instant since) throws Exception {
        broker.pause(queue());
        try (Connection db = Database.connect(settings);
                Statement sql = db.createStatement();
                PreparedStatement delete =
                        db.prepareStatement("DELETE FROM processed_events WHERE processed_at >= ?")) {
            // An older WAR's schema may have no outbox and no ledgers; only the peer's has Camel's repository.
            sql.execute("TRUNCATE accounts");
            sql.execute("DO $$ BEGIN IF to_regclass('payment_announcements') IS NOT NULL THEN"
                    + " TRUNCATE payment_announcements; END IF; END $$");
            // The payments ledger too: kept, the next pass's payments would meet their rows (ON CONFLICT DO NOTHING)
            // instead of writing them as the first pass did.
            sql.execute("DO $$ BEGIN IF to_regclass('payments') IS NOT NULL THEN"
                    + " TRUNCATE payments, refunds; END IF; END $$");
            sql.execute("DO $$ BEGIN IF to_regclass('camel_messageprocessed') IS NOT NULL THEN"
                    + " TRUNCATE camel_messageprocessed; END IF; END $$");
            delete.setObject(1, since.atOffset(ZoneOffset.UTC));
            delete.executeUpdate();
        }
        preload(messages);
        broker.resume(queue());
    }

    String checkBalances(MessageSet messages) throws SQLException {
        Map<String, Long> actual = new HashMap<>();
        try (Connection db = Database.connect(settings);
                PreparedStatement query = db.prepareStatement("SELECT id, balance_cents FROM accounts");
                ResultSet rows = query.executeQuery()) {
            while (rows.next()) {
                actual.put(rows.getString(1), rows.getLong(2));
            }
        }
        if (!actual.equals(messages.expectedBalances())) {
            throw new IllegalStateException("balances WRONG: " + actual.size() + " accounts, expected "
                    + messages.expectedBalances().size());
        }
        return "balances exact";
    }

    long count(String query) throws SQLException {
        try (Connection db = Database.connect(settings);
                PreparedStatement statement = db.prepareStatement(query);
                ResultSet row = statement.executeQuery()) {
            row.next();
            return row.getLong(1);
        }
    }

    long unsentAnnouncements() throws SQLException {
        // A WAR before the relay's position (V7) marked each row sent.
        return count(
                count("SELECT count(*) FROM pg_views WHERE viewname = 'unsent_announcements'") > 0
                        ? "SELECT count(*) FROM unsent_announcements"
                        : "SELECT count(*) FROM payment_announcements WHERE sent_at IS NULL");
    }

    /** Announcements that arrived since the last reset, once {@code expected} have or nothing more comes. */
    long awaitAnnouncements(long expected) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (announcements.received() < expected && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        Thread.sleep(500); // anything beyond the expected count would be a copy
        return announcements.reset();
    }

    /**
     * CPU milliseconds so far of the consumer's JVM (Payara, or the bare consumer), the broker, PostgreSQL, and the
     * consumer's JIT compiler and GC threads.
     */
    double[] cpu(long consumer) {
        return new double[] {
            CpuTime.ofProcess(consumer),
            CpuTime.ofProcess(broker.pid()),
            CpuTime.ofPostgres(postgres.postmasterPid()),
            CpuTime.ofJitCompilers(consumer),
            CpuTime.ofGarbageCollector(consumer)
        };
    }

    /**
     * Where the machine's CPU went during a measured window, per message; returns the three processes' sum.
     *
     * @param consumer what the consumer's JVM is: Payara, or the bare consumer
     */
    static double printCpu(String consumer, double[] from, double[] to, long messages) {
        System.out.printf(
                java.util.Locale.ROOT,
                "    CPU per message: %s %.2f ms (JIT compiler threads %.2f, GC threads %.2f),"
                        + " broker %.2f ms, PostgreSQL %.2f ms%n",
                consumer,
                (to[0] - from[0]) / messages,
                (to[3] - from[3]) / messages,
                (to[4] - from[4]) / messages,
                (to[1] - from[1]) / messages,
                (to[2] - from[2]) / messages);
        return (to[0] - from[0] + to[1] - from[1] + to[2] - from[2]) / messages;
    }

    @Override
    public void close() throws Exception {
        announcements.close();
        broker.stop(Duration.ofSeconds(30));
    }

    static List<String> split(String options) {
        return options == null || options.isBlank()
                ? List.of()
                : List.of(options.trim().split(" +"));
    }
}

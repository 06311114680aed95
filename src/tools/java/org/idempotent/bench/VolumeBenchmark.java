package org.idempotent.bench;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import org.idempotent.loadgen.MessageSet;
import org.idempotent.loadgen.Options;
import org.idempotent.stack.Build;
import org.idempotent.stack.Database;
import org.idempotent.stack.PayaraMicroProcess;
import org.idempotent.stack.PostgresCluster;
import org.idempotent.stack.Settings;

/**
 * The product at production volume (issue 39), {@code mvn -Pbench -Dbench.args="--volume ..."}: processed_events filled
 * to --volume-rows (half of them expired) with the outbox and the accounts in proportion ({@link VolumeFill}), then
 * payments at half the warm rate ({@link VolumeLoad}) on the empty table, on the full one, during retention's purge of
 * the expired half, and during the purge of a second expired window; side by side with the tables' footprint and
 * autovacuum's runs ({@link VolumeReport}). Against a PostgreSQL cluster of its own with autovacuum on, as production
 * runs it: the machine's runs with it off, which hides part of a purge's cost.
 */
final class VolumeBenchmark {

    static final String USAGE = " --volume (this mode) --volume-rows N (20000000) --volume-accounts N (rows / 20)"
            + " --volume-rate MSG_PER_S (default: half the warm rate on the empty table) --volume-minutes M (per paced"
            + " phase, 3; four phases) --dedup-partitioning id|none (DEDUP_PARTITIONING of the installed schema;"
            + " the shipped default) --ids v4|v7 (the events' IDs; v7) --volume-data DIR (the cluster's directory, on a"
            + " file system of one's choice; target/bench/volume-postgres)";

    static final List<String> OPTIONS = List.of(
            "volume",
            "volume-rows",
            "volume-accounts",
            "volume-rate",
            "volume-minutes",
            "dedup-partitioning",
            "volume-data");

    /** Retention runs by the admin calls only: the timers must not purge in the phases without a purge. */
    private static final String TIMER_OFF = "month=1;dayOfMonth=1;hour=0;minute=0";

    private static final String MODE = "DEDUP_PARTITIONING";
    /** Warm-up passes over a backlog on each table, the last of them the warm rate. */
    private static final int DRAINS = 3;

    private static final String BEFORE_PURGE = "before the purge";
    private static final String AFTER_FIRST = "after the first purge";
    private static final String AFTER_SECOND = "after the second window";

    private final BenchStack stack;
    private final Options options;
    private final Path out;
    private final VolumeFill fill;
    private final VolumeReport report = new VolumeReport();

    /** Whether the events carry time-ordered v7 IDs: the producers the table by ID drops whole days for. */
    private final boolean timeOrdered;

    private final Path dataDirectory;

    private VolumeBenchmark(BenchStack stack, Options options, Path out, Path dataDirectory) {
        this.stack = stack;
        this.options = options;
        this.out = out;
        this.dataDirectory = dataDirectory;
        String ids = options.get("ids", "v7");
        if (!List.of("v4", "v7").contains(ids)) {
            throw new IllegalArgumentException("--ids v4|v7, not " + ids);
        }
        this.timeOrdered = ids.equals("v7");
        this.fill = new VolumeFill(stack.settings, timeOrdered);
    }

    static void main(Options options, Settings base, Path out) throws Exception {
        String mode = options.get("dedup-partitioning", Settings.defaults().getOrDefault(MODE, "none"));
        if (!List.of("none", "id").contains(mode)) {
            throw new IllegalArgumentException("--dedup-partitioning id|none, not " + mode);
        }
        // The outbox's upkeep too, whose drop of an expired day the second window's purge starts (VolumeLoad).
        Settings settings = base.with("RETENTION_SCHEDULE", TIMER_OFF).with("ANNOUNCEMENT_PURGE_SCHEDULE", TIMER_OFF);
        if (Settings.defaults().containsKey(MODE)) {
            settings = settings.with(MODE, mode);
        } else if (!mode.equals("none")) {
            throw new IllegalArgumentException("--dedup-partitioning " + mode + ": this build has no " + MODE);
        }
        // A production-sized table against PostgreSQL's toy defaults would measure the defaults: a 1 GB cache, the
        // fill's WAL without a checkpoint every minute, index builds in memory. Autovacuum on, stated, not assumed.
        List<String> cluster = List.of(
                "track_commit_timestamp = on",
                "autovacuum = on",
                "shared_buffers = 1GB",
                "maintenance_work_mem = 512MB",
                "max_wal_size = 4GB",
                // What the worst commits wait for (PhaseWaits): locks waited for over 20 ms, checkpoints,
                // statements over 50 ms in the log; the WAL's write and sync times in pg_stat_wal.
                "log_lock_waits = on",
                "deadlock_timeout = 20ms",
                "log_checkpoints = on",
                "log_min_duration_statement = 50",
                "track_wal_io_timing = on");
        Path data = options.has("volume-data")
                ? Path.of(options.get("volume-data", ""))
                : out.resolve("volume-postgres").toAbsolutePath();
        try (PostgresCluster postgres = PostgresCluster.create(data, cluster);
                BenchStack stack = BenchStack.start(postgres.serve(settings), postgres, out.resolve("broker-gc.log"))) {
            new VolumeBenchmark(stack, options, out, data).run(mode);
            System.out.println("  PostgreSQL's log (lock waits over 20 ms, checkpoints, statements over 50 ms): "
                    + postgres.log());
        }
    }

    private void run(String mode) throws Exception {
        long rows = options.getLong("volume-rows", 20_000_000);
        long accounts = options.getLong("volume-accounts", Math.max(1, rows / 20));
        Duration length = Duration.ofSeconds(Math.round(options.getDouble("volume-minutes", 3) * 60));
        Database.recreate(stack.settings);
        String autovacuum = VolumeTables.autovacuumSettings(stack.settings);
        if (!autovacuum.contains("autovacuum = on")) {
            throw new IllegalStateException("autovacuum is not on in the benchmark's cluster: " + autovacuum);
        }
        String heading = String.format(
                Locale.ROOT,
                "Volume benchmark: %,d dedup records (half expired, RETENTION_DAYS=%d), DEDUP_PARTITIONING=%s, %s IDs;"
                        + " PostgreSQL of its own with autovacuum ON (%s) in %s (%s); retention by POST"
                        + " /admin/retention/purge (the timer off), as shipped otherwise",
                rows,
                fill.windowDays(),
                mode,
                timeOrdered ? "v7" : "v4",
                autovacuum,
                dataDirectory,
                VolumeTables.mountOf(dataDirectory));
        System.out.println(heading);
        VolumeLoad load;
        try (PayaraMicroProcess micro = start("bench-volume-empty")) {
            double warm = warm(micro);
            double rate = options.has("volume-rate") ? options.getDouble("volume-rate", 0) : warm / 2;
            System.out.printf(
                    Locale.ROOT, "  paced phases at %.0f msg/s, %d s each at least%n", rate, length.toSeconds());
            load = new VolumeLoad(stack, rate, timeOrdered, out);
            stack.sql("TRUNCATE processed_events, accounts, payment_announcements");
            report.tables("empty", VolumeTables.take(stack.settings));
            report.phase(load.run("(a) empty table", micro, length, false), warm);
            report.tables("after (a)", VolumeTables.take(stack.settings));
        }
        fill.past(rows, accounts);
        report.tables("after the fill", VolumeTables.take(stack.settings));
        try (PayaraMicroProcess micro = start("bench-volume-full")) {
            double warm = warm(micro);
            report.tables("after the warm-up", VolumeTables.take(stack.settings));
            report.phase(load.run("(b) full table, no purge", micro, length, false), warm);
            report.tables(BEFORE_PURGE, VolumeTables.take(stack.settings));
            expiredLeft("(c)", report.phase(load.run("(c) full table, during the purge", micro, length, true)));
            report.tables(AFTER_FIRST, VolumeTables.take(stack.settings));
            fill.expiredWindow(rows / 2);
            report.tables("second window filled", VolumeTables.take(stack.settings));
            expiredLeft("(d)", report.phase(load.run("(d) the second window's purge", micro, length, true)));
            report.tables(AFTER_SECOND, VolumeTables.take(stack.settings));
        }
        report.print(heading);
        report.ratios(AFTER_FIRST, AFTER_SECOND);
    }

    private void expiredLeft(String phase, VolumeLoad.Phase purged) throws SQLException {
        report.check(String.format(
                Locale.ROOT,
                "expired dedup records (before %s) left after %s's purge (last cutoff %s): %,d",
                fill.expiredBefore(),
                phase,
                purged.purge().cutoff(),
                fill.expiredLeft()));
    }

    private PayaraMicroProcess start(String name) {
        return PayaraMicroProcess.start(
                        name,
                        stack.settings,
                        Build.WAR,
                        List.of(GcPauses.option(out.resolve(name + "-gc.log"))),
                        false,
                        List.of())
                .awaitReady(Duration.ofMinutes(5));
    }

    /** Backlogs drained one after the other on a running instance; answers the last one's msg/s. */
    private double warm(PayaraMicroProcess micro) throws Exception {
        double rate = 0;
        for (int pass = 1; pass <= DRAINS; pass++) {
            MessageSet set = MessageSet.of(
                    "volume-warm-" + UUID.randomUUID().toString().substring(0, 8) + "-",
                    options.getLong("seed", 42) + pass,
                    options.getInt("messages", 20_000),
                    options.getDouble("duplicates", 0.2),
                    options.getInt("accounts", 1000),
                    0,
                    timeOrdered ? MessageSet.Ids.TIME_ORDERED : MessageSet.Ids.RANDOM);
            rate = drain(set, micro);
            System.out.printf(
                    Locale.ROOT,
                    "  %s: backlog of %,d drained at %.0f msg/s%n",
                    micro.name(),
                    set.items().size(),
                    rate);
        }
        return rate;
    }

    /** From the first acknowledgement to an empty queue and outbox, by the broker's count; every event committed. */
    private double drain(MessageSet set, PayaraMicroProcess micro) throws Exception {
        stack.broker().pause(stack.queue());
        stack.preload(set);
        stack.broker().resume(stack.queue());
        long total = set.items().size();
        long first = 0;
        long counted = total;
        long deadline = System.nanoTime() + Duration.ofMinutes(20).toNanos();
        while (true) {
            long waiting = stack.broker().messageCount(stack.queue());
            long now = System.nanoTime();
            if (first == 0 && waiting < total) {
                first = now;
                counted = waiting;
            }
            if (waiting == 0 && stack.unsentAnnouncements() == 0) {
                committed(set);
                stack.announcements().reset();
                return counted / ((now - first) / 1e9);
            }
            if (now > deadline
                    || !ProcessHandle.of(micro.pid())
                            .map(ProcessHandle::isAlive)
                            .orElse(false)) {
                throw new IllegalStateException(waiting + " messages still waiting; see " + micro.log());
            }
            Thread.sleep(20);
        }
    }

    private void committed(MessageSet set) throws SQLException {
        try (Connection db = Database.connect(stack.settings);
                PreparedStatement count =
                        db.prepareStatement("SELECT count(*) FROM processed_events WHERE event_id = ANY (?)")) {
            count.setArray(1, db.createArrayOf("uuid", set.distinctIds().toArray()));
            try (ResultSet row = count.executeQuery()) {
                row.next();
                if (row.getLong(1) != set.distinct().size()) {
                    throw new IllegalStateException(
                            "WRONG: " + row.getLong(1) + " of " + set.distinct().size() + " events committed");
                }
            }
        }
    }
}

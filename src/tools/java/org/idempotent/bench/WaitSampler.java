package org.idempotent.bench;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BiConsumer;
import java.util.regex.Pattern;
import org.idempotent.stack.Database;
import org.idempotent.stack.Settings;

/**
 * PostgreSQL's backends that are not idle, sampled every 10 ms while a phase runs (pg_stat_activity: what each waits
 * for, and what it runs), with the machine's run queue: what {@link WaitAttribution} names the worst commits' waits
 * from. A thread and a connection of its own, as the owner (a superuser on the benchmark's cluster: other roles'
 * wait events are hidden from a role that is not one, nor pg_read_all_stats). Kept in columns of primitives (a
 * 12-minute phase is some 72,000 ticks of a handful of rows) and written as CSV as it goes.
 */
final class WaitSampler implements AutoCloseable {

    static final long PERIOD_MICROS = 10_000;

    /** A consumer's backend: the application's role running anything but maintenance. */
    static final String CONSUMER = "consumer";

    /** A client backend idle in a transaction: it waits for its client (the JVM), not for the server. */
    static final String IDLE_IN_TRANSACTION = "idle-in-tx";

    /**
     * One row per backend not idle (background processes in their main loop's sleep, wait type Activity, are idle too),
     * or a row of nulls when there is none: every tick has its time.
     */
    private static final String ACTIVITY = """
            SELECT CAST(extract(epoch FROM clock_timestamp()) * 1000000 AS bigint), a.pid, a.backend_type, a.state,
                   a.wait_event_type, a.wait_event, a.usename, left(regexp_replace(a.query, '\\s+', ' ', 'g'), 48)
              FROM (SELECT 1) AS tick LEFT JOIN pg_stat_activity AS a
                ON a.pid <> pg_backend_pid() AND coalesce(a.state, '') <> 'idle'
               AND a.wait_event_type IS DISTINCT FROM 'Activity'""";

    /** Statements of retention and the outbox's upkeep (their functions' names, their DELETE), DDL, CHECKPOINT. */
    private static final Pattern MAINTENANCE = Pattern.compile(
            "DETACH|DROP|DELETE|TRUNCATE|VACUUM|ANALYZE|ALTER |CREATE |REINDEX|CHECKPOINT|EXPIRED_DAYS|DAYS_AHEAD");

    private static final Path LOADAVG = Path.of("/proc/loadavg");

    private final String applicationRole;
    private final Connection connection;
    private final BufferedWriter csv;
    private final Thread thread;
    private volatile boolean running = true;

    private final List<String> names = new ArrayList<>();
    private final Map<String, Integer> ids = new HashMap<>();
    private long[] tickAt = new long[1024];
    private short[] runQueue = new short[1024];
    private int ticks;
    private long[] rowAt = new long[4096];
    private int[] rowKind = new int[4096];
    private int[] rowWait = new int[4096];
    private int rows;

    private WaitSampler(Settings settings, Path csvFile) throws SQLException, IOException {
        this.applicationRole = settings.get("DB_USER");
        this.connection = Database.connect(settings);
        this.csv = Files.newBufferedWriter(csvFile);
        csv.write("sample_epoch_us,run_queue,pid,backend_type,state,wait_event_type,wait_event,query_prefix\n");
        this.thread = Thread.ofPlatform().name("wait-sampler").daemon().start(this::loop);
    }

    /** Sampling from now on, the CSV written to {@code csvFile}. */
    static WaitSampler start(Settings settings, Path csvFile) throws SQLException, IOException {
        return new WaitSampler(settings, csvFile);
    }

    private void loop() {
        long next = System.nanoTime();
        try (PreparedStatement query = connection.prepareStatement(ACTIVITY)) {
            while (running) {
                sample(query);
                next += PERIOD_MICROS * 1000;
                long now = System.nanoTime();
                if (next < now) {
                    next = now; // behind (a slow query, a busy machine): skip, do not catch up in a burst
                }
                LockSupport.parkNanos(next - now);
            }
        } catch (SQLException | IOException e) {
            System.out.println("    wait sampler stopped: " + e);
        }
    }

    private void sample(PreparedStatement query) throws SQLException, IOException {
        int queue = runQueue();
        try (ResultSet row = query.executeQuery()) {
            boolean first = true;
            while (row.next()) {
                long at = row.getLong(1);
                if (first) {
                    tick(at, queue);
                    first = false;
                }
                if (row.getObject(2) == null) {
                    continue;
                }
                String type = row.getString(3);
                String state = row.getString(4);
                String prefix = row.getString(8) == null ? "" : row.getString(8);
                row(at, kind(type, row.getString(7), prefix), wait(state, row.getString(5), row.getString(6)));
                csv.write(String.format(
                        Locale.ROOT,
                        "%d,%d,%d,%s,%s,%s,%s,\"%s\"%n",
                        at,
                        queue,
                        row.getInt(2),
                        type,
                        state == null ? "" : state,
                        row.getString(5) == null ? "" : row.getString(5),
                        row.getString(6) == null ? "" : row.getString(6),
                        prefix.replace("\"", "\"\"")));
            }
        }
    }

    /** Who a row is: a consumer, a maintenance statement (its start), or the background process it is. */
    private String kind(String backendType, String role, String prefix) {
        if ("client backend".equals(backendType)) {
            if (MAINTENANCE.matcher(prefix.toUpperCase(Locale.ROOT)).find()) {
                return "maint: " + shorten(prefix);
            }
            return applicationRole.equals(role) ? CONSUMER : "client " + role;
        }
        if ("autovacuum worker".equals(backendType)) {
            return shorten(prefix.replace("autovacuum: ", "autovac: "));
        }
        return String.valueOf(backendType);
    }

    private static String wait(String state, String type, String event) {
        if (state != null && state.startsWith("idle in transaction")) {
            return IDLE_IN_TRANSACTION;
        }
        return type == null ? "CPU" : type + ":" + event;
    }

    private static String shorten(String prefix) {
        return prefix.length() <= 32 ? prefix : prefix.substring(0, 32) + "…";
    }

    /** The machine's runnable tasks now (/proc/loadavg's fourth field, running/total; this thread one of them). */
    private static int runQueue() {
        try {
            String[] fields = Files.readString(LOADAVG).split(" ");
            return Integer.parseInt(fields[3].substring(0, fields[3].indexOf('/')));
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    private void tick(long at, int queue) {
        if (ticks == tickAt.length) {
            tickAt = Arrays.copyOf(tickAt, ticks * 2);
            runQueue = Arrays.copyOf(runQueue, ticks * 2);
        }
        tickAt[ticks] = at;
        runQueue[ticks++] = (short) Math.min(queue, Short.MAX_VALUE);
    }

    private void row(long at, String kind, String wait) {
        if (rows == rowAt.length) {
            rowAt = Arrays.copyOf(rowAt, rows * 2);
            rowKind = Arrays.copyOf(rowKind, rows * 2);
            rowWait = Arrays.copyOf(rowWait, rows * 2);
        }
        rowAt[rows] = at;
        rowKind[rows] = id(kind);
        rowWait[rows++] = id(wait);
    }

    private int id(String name) {
        return ids.computeIfAbsent(name, n -> {
            names.add(n);
            return names.size() - 1;
        });
    }

    /** The rows sampled within [from, to] (epoch microseconds), as (who, what it waited for); after {@link #close}. */
    void rows(long from, long to, BiConsumer<String, String> each) {
        for (int i = first(rowAt, rows, from); i < rows && rowAt[i] <= to; i++) {
            each.accept(names.get(rowKind[i]), names.get(rowWait[i]));
        }
    }

    /** The ticks within [from, to]. */
    int ticks(long from, long to) {
        return first(tickAt, ticks, to + 1) - first(tickAt, ticks, from);
    }

    /** The run queues of the ticks within [from, to], sorted (-1 where /proc/loadavg could not be read). */
    short[] runQueues(long from, long to) {
        short[] within = Arrays.copyOfRange(runQueue, first(tickAt, ticks, from), first(tickAt, ticks, to + 1));
        Arrays.sort(within);
        return within;
    }

    /** The first tick's time, or 0. */
    long start() {
        return ticks == 0 ? 0 : tickAt[0];
    }

    /** The first index of {@code times} (sorted, {@code count} of them) at or after {@code at}. */
    private static int first(long[] times, int count, long at) {
        int index = Arrays.binarySearch(times, 0, count, at);
        if (index < 0) {
            return -index - 1;
        }
        while (index > 0 && times[index - 1] == at) {
            index--;
        }
        return index;
    }

    @Override
    public void close() {
        running = false;
        try {
            thread.join();
            csv.close();
            connection.close();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }
}

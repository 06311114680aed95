package org.idempotent.faults;

import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.idempotent.stack.Commands;
import org.idempotent.stack.FreePort;
import org.idempotent.stack.PostgresBinaries;
import org.idempotent.stack.PostgresCluster;
import org.idempotent.stack.Settings;

/**
 * A PostgreSQL primary and a streaming standby made by the test itself under target/ (initdb, pg_basebackup), each on
 * a port of its own; the machine's cluster is not touched. The failover procedure is the one src/site/markdown/production-topology.md prescribes:
 * the primary dies, the standby is promoted and, since no standby is left for it to wait for, runs with
 * {@code synchronous_standby_names} cleared until the old primary has been rewound and has rejoined as its standby.
 */
final class PostgresPair implements AutoCloseable {

    private static final String SUPERUSER = PostgresCluster.SUPERUSER;
    /** A standby needs pg_basebackup and pg_rewind, which only the machine's installation has. */
    private static final PostgresBinaries MACHINE = PostgresBinaries.ofMachineFor("The failover suite's standby");

    /** A read of one database. */
    @FunctionalInterface
    interface Read<T> {
        T from(Connection connection) throws SQLException;
    }

    /** One server of the pair; the roles move between the two. */
    static final class Node {
        private final String name;
        private final Path dir;
        private final int port = FreePort.find();

        private Node(String name, Path dir) {
            this.name = name;
            this.dir = dir;
        }

        int port() {
            return port;
        }

        /**
         * Every process of the server stopped (SIGSTOP), its sockets left open: a host that hangs. Its clients see no
         * reset and no error, only silence.
         */
        void freeze() {
            org.idempotent.stack.ChildProcess.signalTree(postmasterPid(), "STOP");
        }

        String address() {
            return "127.0.0.1:" + port;
        }

        Connection connect(String database) throws SQLException {
            return DriverManager.getConnection("jdbc:postgresql://" + address() + "/" + database, SUPERUSER, "");
        }

        boolean inRecovery() throws SQLException {
            return query("SELECT pg_is_in_recovery()").equals("t");
        }

        String query(String sql) throws SQLException {
            try (Connection connection = connect("postgres");
                    Statement statement = connection.createStatement();
                    ResultSet row = statement.executeQuery(sql)) {
                return row.next() ? row.getString(1) : "";
            }
        }

        void execute(String sql) throws SQLException {
            try (Connection connection = connect("postgres");
                    Statement statement = connection.createStatement()) {
                statement.execute(sql);
            }
        }

        void start() {
            MACHINE.run(
                    "pg_ctl",
                    "-D",
                    dir.toString(),
                    "-l",
                    dir.resolveSibling(name + ".log").toString(),
                    "-w",
                    "-t",
                    "120",
                    "start");
        }

        /**
         * What this stopped node holds, read on a port of its own that no client is given, then stopped again: a
         * crashed primary left out of the pair shows what it had committed, without ever taking a consumer's
         * connection (on its usual port, targetServerType=primary would find two primaries).
         */
        <T> T readAlone(String database, Read<T> read) throws SQLException {
            int alone = FreePort.find();
            MACHINE.run(
                    "pg_ctl",
                    "-D",
                    dir.toString(),
                    "-l",
                    dir.resolveSibling(name + "-alone.log").toString(),
                    "-o",
                    "-p " + alone,
                    "-w",
                    "-t",
                    "120",
                    "start");
            try (Connection connection = DriverManager.getConnection(
                    "jdbc:postgresql://127.0.0.1:" + alone + "/" + database, SUPERUSER, "")) {
                return read.from(connection);
            } finally {
                stop();
            }
        }

        /**
         * As a crash would: SIGKILL to the postmaster and every backend at once, no shutdown checkpoint, no goodbye
         * to the standby or the clients.
         */
        void crash() {
            long postmaster = postmasterPid();
            List<ProcessHandle> all = new ArrayList<>();
            ProcessHandle.of(postmaster).ifPresent(handle -> {
                all.add(handle);
                handle.descendants().forEach(all::add);
            });
            all.forEach(ProcessHandle::destroyForcibly);
            await().atMost(Duration.ofSeconds(30)).until(() -> all.stream().noneMatch(ProcessHandle::isAlive));
            try {
                Files.deleteIfExists(dir.resolve("postmaster.pid"));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        void stop() {
            if (Files.exists(dir.resolve("postmaster.pid"))) {
                MACHINE.run("pg_ctl", "-D", dir.toString(), "-m", "fast", "-w", "stop");
            }
        }

        void promote() {
            MACHINE.run("pg_ctl", "-D", dir.toString(), "-w", "promote");
        }

        private long postmasterPid() {
            try {
                return Long.parseLong(
                        Files.readAllLines(dir.resolve("postmaster.pid")).get(0).trim());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        /** Streams from {@code source}, asking to be its synchronous standby (by this node's name). */
        private void followWithSignal(Node source) throws IOException {
            Files.writeString(dir.resolve("standby.signal"), "");
            append(
                    dir.resolve("postgresql.auto.conf"),
                    "primary_conninfo = 'host=127.0.0.1 port=" + source.port + " user=" + SUPERUSER
                            + " application_name=" + name + "'\n");
        }

        private void configure(boolean synchronous) throws IOException {
            append(
                    dir.resolve("postgresql.conf"),
                    String.join(
                                    "\n",
                                    "port = " + port,
                                    "listen_addresses = '127.0.0.1'",
                                    "unix_socket_directories = ''",
                                    "max_connections = 100",
                                    "wal_level = replica",
                                    "max_wal_senders = 4",
                                    "wal_keep_size = '512MB'",
                                    // pg_rewind needs it to bring a crashed primary back as a standby.
                                    "wal_log_hints = on",
                                    "hot_standby = on",
                                    "synchronous_commit = on",
                                    // Whichever standby streams first is the synchronous one ('*'); empty:
                                    // asynchronous.
                                    "synchronous_standby_names = '" + (synchronous ? "*" : "") + "'",
                                    "")
                            + "\n");
            // Only the postgresql.conf of this node: the other one has its own port.
            Files.writeString(
                    dir.resolve("pg_hba.conf"),
                    String.join(
                            "\n", "host all all 127.0.0.1/32 trust", "host replication all 127.0.0.1/32 trust", ""));
        }
    }

    private final Path root;
    private final boolean synchronous;
    private Node primary;
    private Node standby;

    private PostgresPair(Path root, boolean synchronous) {
        this.root = root;
        this.synchronous = synchronous;
    }

    /** A fresh pair under {@code root}, streaming, the standby synchronous or not. */
    static PostgresPair create(Path root, boolean synchronous) throws IOException, SQLException {
        Commands.deleteRecursively(root);
        Files.createDirectories(root);
        if (PostgresBinaries.runningAsRoot()) {
            Commands.run(List.of("chown", PostgresBinaries.serverUser(), root.toString()), Map.of());
        }
        PostgresPair pair = new PostgresPair(root, synchronous);
        pair.primary = new Node("pg-a", root.resolve("pg-a"));
        pair.standby = new Node("pg-b", root.resolve("pg-b"));
        MACHINE.run("initdb", "-D", pair.primary.dir.toString(), "-U", SUPERUSER, "-A", "trust", "--no-sync");
        pair.primary.configure(synchronous);
        pair.primary.start();
        pair.attachStandby(pair.standby);
        return pair;
    }

    Node primary() {
        return primary;
    }

    Node standby() {
        return standby;
    }

    /** {@code settings} with the pair as DB_HOST/DB_PORT and DB_STANDBY_HOST/DB_STANDBY_PORT, as created. */
    Settings serversOf(Settings settings) {
        return settings.with("DB_HOST", "127.0.0.1")
                .with("DB_PORT", String.valueOf(primary.port))
                .with("DB_STANDBY_HOST", "127.0.0.1")
                .with("DB_STANDBY_PORT", String.valueOf(standby.port));
    }

    /**
     * The standby promoted after the primary has died. Left as it came from the base backup, it would wait for a
     * synchronous standby that does not exist, and every commit with it: the documented policy (production-topology.md) is to run degraded
     * (the setting cleared) until a standby is back, a window in which a commit is on one server's disk only.
     */
    void failOver() throws SQLException {
        standby.promote();
        await().atMost(Duration.ofMinutes(1)).ignoreExceptions().until(() -> !standby.inRecovery());
        if (synchronous) {
            standby.execute("ALTER SYSTEM SET synchronous_standby_names = ''");
            standby.execute("SELECT pg_reload_conf()");
        }
        Node dead = primary;
        primary = standby;
        standby = dead;
    }

    /**
     * The crashed old primary back, as a standby only: rewound to the new primary's timeline (pg_rewind discards what
     * it wrote that the new primary never received) and streaming from it; then the new primary is synchronous again.
     */
    void rejoinOldPrimary() throws IOException, SQLException {
        // A promotion ends recovery without a checkpoint; until the first one, the new primary's control file still
        // names the old timeline, and pg_rewind would find "no rewind required" and leave the divergent WAL in place.
        primary.execute("CHECKPOINT");
        MACHINE.run(
                "pg_rewind",
                "-D",
                standby.dir.toString(),
                "--source-server=host=127.0.0.1 port=" + primary.port + " user=" + SUPERUSER + " dbname=postgres");
        // pg_rewind copied the new primary's configuration files, its port with them.
        append(standby.dir.resolve("postgresql.conf"), "port = " + standby.port + "\n");
        standby.followWithSignal(primary);
        standby.start();
        awaitStreaming("async");
        if (synchronous) {
            primary.execute("ALTER SYSTEM SET synchronous_standby_names = '*'");
            primary.execute("SELECT pg_reload_conf()");
            awaitStreaming("sync");
        }
    }

    /** Bytes of WAL the primary has written that the standby has not yet replayed (0 if it is caught up). */
    long replayLagBytes() throws SQLException {
        String lag = primary.query("SELECT coalesce(max(pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn)), -1) "
                + "FROM pg_stat_replication");
        return Long.parseLong(lag);
    }

    private void attachStandby(Node node) throws IOException, SQLException {
        MACHINE.run(
                "pg_basebackup",
                "-D",
                node.dir.toString(),
                "-h",
                "127.0.0.1",
                "-p",
                String.valueOf(primary.port),
                "-U",
                SUPERUSER,
                "-X",
                "stream",
                "--no-sync");
        append(node.dir.resolve("postgresql.conf"), "port = " + node.port + "\n");
        node.followWithSignal(primary);
        node.start();
        awaitStreaming(synchronous ? "sync" : "async");
    }

    private void awaitStreaming(String wanted) {
        await().atMost(Duration.ofMinutes(1))
                .ignoreExceptions()
                .until(() -> primary.query("SELECT sync_state FROM pg_stat_replication WHERE state = 'streaming'")
                        .equals(wanted));
    }

    @Override
    public void close() {
        for (Node node : new Node[] {primary, standby}) {
            if (node != null) {
                try {
                    node.stop();
                } catch (RuntimeException e) {
                    node.crash();
                }
            }
        }
    }

    private static void append(Path file, String text) throws IOException {
        Files.writeString(file, text, StandardOpenOption.APPEND);
    }
}

package org.idempotent.stack;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermission;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A PostgreSQL cluster of its own under a directory ({@code data/} and {@code postgres.log}), for a tool or test that
 * must not need, reconfigure or share the machine's: the run command's database when none is configured, the tests'
 * when the machine has none, the benchmark's (commit timestamps on, its CPU its own). Trust authentication on the
 * loopback addresses only, no Unix socket.
 */
public final class PostgresCluster implements AutoCloseable {

    /** The database superuser initdb makes (a role, whatever operating-system user runs the server). */
    public static final String SUPERUSER = "postgres";

    private static final Pattern PORT_LINE = Pattern.compile("(?m)^port = (\\d+)$");

    private final PostgresBinaries binaries;
    private final Path root;
    private final int port;

    private PostgresCluster(PostgresBinaries binaries, Path root, int port) {
        this.binaries = binaries;
        this.root = root;
        this.port = port;
    }

    /**
     * A new cluster under {@code root} (emptied first), started, with {@code settings} (postgresql.conf lines), of the
     * machine's binaries where it has them (the benchmark's figures were taken with them), else the build's.
     */
    public static PostgresCluster create(Path root, List<String> settings) throws IOException {
        Commands.deleteRecursively(root);
        PostgresBinaries binaries = PostgresBinaries.ofMachine().orElseGet(PostgresBinaries::fromBuild);
        PostgresCluster cluster = initialise(binaries, root, FreePort.find(), settings);
        cluster.start();
        return cluster;
    }

    /**
     * The cluster under {@code root}, made there first if it has none (then on {@code port}, or a free port when
     * {@code port} is 0), and started: its data survives a stop, its port is the one it was made with.
     */
    public static PostgresCluster open(PostgresBinaries binaries, Path root, int port) throws IOException {
        Optional<Integer> existing = portOf(root);
        PostgresCluster cluster = existing.isPresent()
                ? new PostgresCluster(binaries, root, existing.get())
                : initialise(binaries, root, port == 0 ? FreePort.find() : port, List.of());
        if (!(Files.exists(root.resolve("data").resolve("postmaster.pid")) && listening("127.0.0.1", cluster.port))) {
            cluster.start(); // else still running, from a run that was killed
        }
        return cluster;
    }

    /**
     * The port of the cluster made under {@code root}, if there is one: how a tool finds the run command's database
     * (the load generator) without being told.
     */
    public static Optional<Integer> portOf(Path root) {
        Path conf = root.resolve("data").resolve("postgresql.conf");
        if (!Files.isRegularFile(conf)) {
            return Optional.empty();
        }
        try {
            Matcher port = PORT_LINE.matcher(Files.readString(conf));
            Integer last = null;
            while (port.find()) {
                last = Integer.valueOf(port.group(1));
            }
            return Optional.ofNullable(last);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static PostgresCluster initialise(PostgresBinaries binaries, Path root, int port, List<String> settings)
            throws IOException {
        Files.createDirectories(root);
        requireReachable(root);
        if (PostgresBinaries.runningAsRoot()) {
            Commands.run(List.of("chown", PostgresBinaries.serverUser(), root.toString()), java.util.Map.of());
        }
        Path data = root.resolve("data");
        binaries.run("initdb", "-D", data.toString(), "-U", SUPERUSER, "-A", "trust", "-E", "UTF8", "--no-sync");
        List<String> conf = new ArrayList<>(
                List.of("port = " + port, "listen_addresses = 'localhost'", "unix_socket_directories = ''"));
        conf.addAll(settings);
        Files.writeString(data.resolve("postgresql.conf"), String.join("\n", conf) + "\n", StandardOpenOption.APPEND);
        Files.writeString(data.resolve("pg_hba.conf"), "host all all 127.0.0.1/32 trust\nhost all all ::1/128 trust\n");
        return new PostgresCluster(binaries, root, port);
    }

    public void start() {
        binaries.run("pg_ctl", "-D", dataDir(), "-l", log().toString(), "-w", "-t", "120", "start");
    }

    /** From now on, a client that does not speak TLS is turned away (pg_hba.conf rewritten, the server reloaded). */
    public void refusePlainConnections() throws IOException {
        Files.writeString(
                root.resolve("data").resolve("pg_hba.conf"),
                "hostssl all all 127.0.0.1/32 trust\nhostssl all all ::1/128 trust\nhostnossl all all all reject\n");
        binaries.run("pg_ctl", "-D", dataDir(), "reload");
    }

    /**
     * From now on every client proves a password (scram-sha-256), as a production server asks: the superuser's becomes
     * {@code superuserPassword} (pg_hba.conf rewritten, the server reloaded; the reload takes effect a moment later).
     */
    public void requirePasswords(String superuserPassword) throws IOException {
        try (Connection connection = DriverManager.getConnection(
                        "jdbc:postgresql://127.0.0.1:" + port + "/postgres", SUPERUSER, "");
                PreparedStatement password =
                        connection.prepareStatement("SELECT format('ALTER ROLE %I PASSWORD %L', current_user, ?)")) {
            password.setString(1, superuserPassword);
            try (ResultSet statement = password.executeQuery();
                    Statement alter = connection.createStatement()) {
                statement.next();
                alter.execute(statement.getString(1));
            }
        } catch (SQLException e) {
            throw new IllegalStateException("could not set the superuser's password on port " + port, e);
        }
        Files.writeString(
                root.resolve("data").resolve("pg_hba.conf"),
                "host all all 127.0.0.1/32 scram-sha-256\nhost all all ::1/128 scram-sha-256\n");
        binaries.run("pg_ctl", "-D", dataDir(), "reload");
    }

    public void stop() {
        binaries.run("pg_ctl", "-D", dataDir(), "-m", "fast", "-w", "stop");
    }

    /** The server's log: its messages, such as a refused handshake, since the cluster was made. */
    public Path log() {
        return root.resolve("postgres.log");
    }

    public int port() {
        return port;
    }

    public PostgresBinaries binaries() {
        return binaries;
    }

    /** {@code settings} pointed at this cluster (as primary and as its own standby). */
    public Settings serve(Settings settings) {
        return serving(settings, port);
    }

    /** {@code settings} pointed at a cluster of this kind on {@code port} of the loopback address. */
    static Settings serving(Settings settings, int port) {
        return settings.with("DB_HOST", "127.0.0.1")
                .with("DB_PORT", String.valueOf(port))
                .with("DB_STANDBY_HOST", "127.0.0.1")
                .with("DB_STANDBY_PORT", String.valueOf(port));
    }

    /** The postmaster: its children are the cluster's backends and workers. */
    public long postmasterPid() {
        try {
            return Long.parseLong(Files.readAllLines(root.resolve("data").resolve("postmaster.pid"))
                    .get(0)
                    .strip());
        } catch (IOException e) {
            throw new UncheckedIOException("is the cluster in " + root + " running?", e);
        }
    }

    @Override
    public void close() {
        stop();
    }

    private String dataDir() {
        return root.resolve("data").toString();
    }

    /** Whether a server answers on {@code host:port} (a TCP connection is accepted). */
    public static boolean listening(String host, int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(host, port), 1000);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * The server's user must reach the cluster's directory: a checkout inside a private directory (mktemp -d makes one
     * 0700, /root is one) cannot hold a cluster run as root, and initdb's own message does not say which directory is
     * in the way.
     */
    private static void requireReachable(Path dir) throws IOException {
        if (!PostgresBinaries.runningAsRoot()) {
            return; // the cluster runs as this user
        }
        for (Path ancestor = dir.toAbsolutePath().getParent(); ancestor != null; ancestor = ancestor.getParent()) {
            if (!Files.getPosixFilePermissions(ancestor).contains(PosixFilePermission.OTHERS_EXECUTE)) {
                throw new IllegalStateException("PostgreSQL runs as the user " + PostgresBinaries.serverUser()
                        + " here (it refuses root), who cannot reach " + dir + ": " + ancestor
                        + " is closed to others (chmod o+x " + ancestor + ", or check out the project elsewhere)");
            }
        }
    }
}

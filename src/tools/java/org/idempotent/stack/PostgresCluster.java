package org.idempotent.stack;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermission;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A PostgreSQL cluster of its own, made under a directory (initdb) on a free port, for a tool or test that must not
 * reconfigure or share the machine's cluster: the benchmark's (commit timestamps on, its CPU its own). Trust
 * authentication on 127.0.0.1 only, no Unix socket.
 */
public final class PostgresCluster implements AutoCloseable {

    public static final String SUPERUSER = "postgres";
    private static final Path BIN = binaries();

    private final Path dir;
    private final int port = FreePort.find();

    private PostgresCluster(Path dir) {
        this.dir = dir;
    }

    /** A new cluster under {@code root} (emptied first), started, with {@code settings} (postgresql.conf lines). */
    public static PostgresCluster create(Path root, List<String> settings) throws IOException {
        Commands.deleteRecursively(root);
        Files.createDirectories(root);
        requireReachable(root);
        asRoot("chown", SUPERUSER, root.toString());
        PostgresCluster cluster = new PostgresCluster(root.resolve("data"));
        asPostgres("initdb", "-D", cluster.dir.toString(), "-U", SUPERUSER, "-A", "trust", "--no-sync");
        List<String> conf = new ArrayList<>(
                List.of("port = " + cluster.port, "listen_addresses = '127.0.0.1'", "unix_socket_directories = ''"));
        conf.addAll(settings);
        Files.writeString(
                cluster.dir.resolve("postgresql.conf"), String.join("\n", conf) + "\n", StandardOpenOption.APPEND);
        Files.writeString(cluster.dir.resolve("pg_hba.conf"), "host all all 127.0.0.1/32 trust\n");
        asPostgres(
                "pg_ctl",
                "-D",
                cluster.dir.toString(),
                "-l",
                root.resolve("postgres.log").toString(),
                "-w",
                "-t",
                "120",
                "start");
        return cluster;
    }

    /** {@code settings} pointed at this cluster (as primary and as its own standby). */
    public Settings serve(Settings settings) {
        String port = String.valueOf(this.port);
        return settings.with("DB_HOST", "127.0.0.1")
                .with("DB_PORT", port)
                .with("DB_STANDBY_HOST", "127.0.0.1")
                .with("DB_STANDBY_PORT", port);
    }

    /** The postmaster: its children are the cluster's backends and workers. */
    public long postmasterPid() {
        try {
            return Long.parseLong(
                    Files.readAllLines(dir.resolve("postmaster.pid")).get(0).strip());
        } catch (IOException e) {
            throw new UncheckedIOException("is the cluster in " + dir + " running?", e);
        }
    }

    @Override
    public void close() {
        asPostgres("pg_ctl", "-D", dir.toString(), "-m", "fast", "-w", "stop");
    }

    /**
     * The postgres user must reach the cluster's directory: a checkout inside a private directory (mktemp -d makes one
     * 0700) cannot hold a cluster, and initdb's own message does not say which directory is in the way.
     */
    private static void requireReachable(Path dir) throws IOException {
        if (!"root".equals(System.getProperty("user.name"))) {
            return; // the cluster runs as this user
        }
        for (Path ancestor = dir.toAbsolutePath().getParent(); ancestor != null; ancestor = ancestor.getParent()) {
            if (!Files.getPosixFilePermissions(ancestor).contains(PosixFilePermission.OTHERS_EXECUTE)) {
                throw new IllegalStateException("the postgres user cannot reach " + dir + ": " + ancestor
                        + " is closed to others (chmod o+x " + ancestor + ", or check out the project elsewhere)");
            }
        }
    }

    /** PostgreSQL refuses to run as root: its commands run as the postgres user when this runs as root. */
    public static String asPostgres(String... command) {
        List<String> line = new ArrayList<>();
        if ("root".equals(System.getProperty("user.name"))) {
            line.addAll(List.of("runuser", "-u", SUPERUSER, "--"));
        }
        line.add(BIN.resolve(command[0]).toString());
        line.addAll(List.of(command).subList(1, command.length));
        return Commands.run(line, Map.of());
    }

    public static void asRoot(String... command) {
        if ("root".equals(System.getProperty("user.name"))) {
            Commands.run(List.of(command), Map.of());
        }
    }

    /** The server binaries of the newest PostgreSQL installed (Debian keeps them out of PATH). */
    private static Path binaries() {
        try (var versions = Files.list(Path.of("/usr/lib/postgresql"))) {
            return versions.sorted().reduce((a, b) -> b).orElseThrow().resolve("bin");
        } catch (IOException e) {
            throw new UncheckedIOException("PostgreSQL's server binaries are expected in /usr/lib/postgresql", e);
        }
    }
}

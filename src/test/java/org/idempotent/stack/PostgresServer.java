package org.idempotent.stack;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.stream.Stream;

/**
 * The machine's PostgreSQL cluster (Debian's pg_ctlcluster), stopped and started for real by the tests that prove
 * the consumer's behaviour while the database is gone. Callers start it again in a finally block.
 */
public final class PostgresServer {

    private PostgresServer() {}

    public static void stop() {
        pgCtlCluster("stop", "-m", "fast");
    }

    public static void start() {
        pgCtlCluster("start");
    }

    private static void pgCtlCluster(String... action) {
        Commands.run(
                Stream.concat(
                                Stream.of("pg_ctlcluster", "--skip-systemctl-redirect", clusterVersion(), "main"),
                                Stream.of(action))
                        .toList(),
                Map.of());
    }

    private static String clusterVersion() {
        try (Stream<Path> versions = Files.list(Path.of("/etc/postgresql"))) {
            return versions.map(path -> path.getFileName().toString())
                    .sorted()
                    .reduce((a, b) -> b)
                    .orElseThrow(() -> new IllegalStateException("no cluster under /etc/postgresql"));
        } catch (IOException e) {
            throw new IllegalStateException("these tests need a local Debian PostgreSQL cluster", e);
        }
    }
}

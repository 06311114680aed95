package org.idempotent.stack;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
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
        String version = clusterVersion();
        List<String> command = Stream.concat(
                        Stream.of("pg_ctlcluster", "--skip-systemctl-redirect", version, "main"), Stream.of(action))
                .toList();
        try {
            Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
            String output = new String(process.getInputStream().readAllBytes());
            if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
                throw new IllegalStateException(String.join(" ", command) + " failed: " + output);
            }
        } catch (IOException e) {
            throw new IllegalStateException(String.join(" ", command) + " could not run", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    private static String clusterVersion() {
        try (Stream<Path> versions = Files.list(Path.of("/etc/postgresql"))) {
            return versions.map(path -> path.getFileName().toString()).sorted().reduce((a, b) -> b)
                    .orElseThrow(() -> new IllegalStateException("no cluster under /etc/postgresql"));
        } catch (IOException e) {
            throw new IllegalStateException("these tests need a local Debian PostgreSQL cluster", e);
        }
    }
}

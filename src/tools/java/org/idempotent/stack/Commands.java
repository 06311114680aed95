package org.idempotent.stack;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/** Commands the tests and tools run to completion (pg_ctl, asadmin, setup scripts), and a directory they clear. */
public final class Commands {

    private static final long TIMEOUT_MINUTES = 10;

    private Commands() {}

    /** With the test run's environment plus {@code environment}; returns the output, or fails with it. */
    public static String run(List<String> command, Map<String, String> environment) {
        return run(command, environment, false);
    }

    /** {@code clean}: only {@code environment}, nothing inherited from the test run. */
    public static String run(List<String> command, Map<String, String> environment, boolean clean) {
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        if (clean) {
            builder.environment().clear();
        }
        builder.environment().putAll(environment);
        try {
            Process process = builder.start();
            String output = new String(process.getInputStream().readAllBytes());
            if (!process.waitFor(TIMEOUT_MINUTES, TimeUnit.MINUTES) || process.exitValue() != 0) {
                throw new IllegalStateException(String.join(" ", command) + " failed:\n" + output);
            }
            return output;
        } catch (IOException e) {
            throw new IllegalStateException(String.join(" ", command) + " could not run", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    public static void deleteRecursively(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(path);
            }
        }
    }
}

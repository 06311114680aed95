package org.idempotent.stack;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** A process of the local stack (broker or Payara Micro) with its log file; stopping it never leaves it running. */
public class ChildProcess implements AutoCloseable {

    private final String name;
    private final Process process;
    private final Path log;
    /** Where this process's output starts in its log, which earlier processes of the same name may have written. */
    private final long logStart;

    protected ChildProcess(
            String name, List<String> command, Map<String, String> environment, Path log, boolean showOutput)
            throws IOException {
        this.name = name;
        this.log = log;
        Files.createDirectories(log.getParent());
        this.logStart = Files.exists(log) ? Files.size(log) : 0;
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        builder.environment().putAll(environment);
        if (showOutput) {
            builder.inheritIO();
        } else {
            builder.redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
        }
        this.process = builder.start();
    }

    /**
     * JVM options for every broker and Payara this JVM starts, after their own: the system property
     * {@code stack.jvm.options}, which only the test run sets (pom.xml).
     */
    public static List<String> extraJvmOptions() {
        String options = System.getProperty("stack.jvm.options", "").strip();
        return options.isEmpty() ? List.of() : List.of(options.split("\\s+"));
    }

    /** Runs {@code then} with the exit code once the process has exited, however it ended. */
    protected void whenExited(java.util.function.IntConsumer then) {
        process.onExit().thenAccept(exited -> then.accept(exited.exitValue()));
    }

    static String java() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    public String name() {
        return name;
    }

    public long pid() {
        return process.pid();
    }

    public Path log() {
        return log;
    }

    /**
     * The part of this process's log a reader of a CI transcript needs when it misbehaved, where the log file itself
     * is gone with the machine (earlier processes of the same name left out): its last {@code limit} warnings and
     * errors (and their causes), and the main thread's stack from the thread dump at its end, if there is one.
     */
    public String logExcerpt(int limit) {
        List<String> lines;
        try {
            lines = logSinceStart().lines().toList();
        } catch (IOException e) {
            return "(log unreadable: " + e.getMessage() + ")";
        }
        List<String> notable = lines.stream()
                .filter(line -> line.contains("[SEVERE]")
                        || line.contains("[WARNING]")
                        || line.startsWith("Caused by:")
                        || line.contains("Exception:"))
                .toList();
        StringBuilder excerpt =
                new StringBuilder("last warnings and errors of ").append(log).append(':');
        notable.subList(Math.max(0, notable.size() - limit), notable.size())
                .forEach(line -> excerpt.append("\n  ").append(line.strip()));
        int main = -1;
        for (int i = lines.size() - 1; i >= 0 && main < 0; i--) {
            if (lines.get(i).startsWith("\"main\"")) {
                main = i;
            }
        }
        if (main >= 0) {
            excerpt.append("\nthe main thread:");
            for (int i = main;
                    i < Math.min(lines.size(), main + 40) && !lines.get(i).isBlank();
                    i++) {
                excerpt.append("\n  ").append(lines.get(i).strip());
            }
        }
        return excerpt.toString();
    }

    /** What this process has written to its log so far. */
    protected String logSinceStart() throws IOException {
        String whole = Files.readString(log, StandardCharsets.ISO_8859_1);
        return whole.substring((int) Math.min(logStart, whole.length()));
    }

    /** kill -9: no shutdown hook, no clean close of anything. */
    public void kill() {
        process.destroyForcibly();
        await(Duration.ofSeconds(30));
    }

    /** SIGTERM, then SIGKILL if it has not gone after the grace period. */
    public void stop(Duration grace) {
        if (!process.isAlive()) {
            return;
        }
        process.destroy();
        if (!await(grace)) {
            kill();
        }
    }

    /**
     * SIGSTOP to the process and every descendant: a host that hangs or a JVM in a long pause. Its sockets stay open
     * and the kernel keeps acknowledging what its peers send, so they see no error, only silence.
     */
    public void freeze() {
        signalTree(process.pid(), "STOP");
    }

    /** SIGCONT: the frozen process runs on from where it stopped. */
    public void thaw() {
        signalTree(process.pid(), "CONT");
    }

    /** {@code kill -<signal>} to {@code pid} and its descendants, the parent first. */
    public static void signalTree(long pid, String signal) {
        List<String> command = new java.util.ArrayList<>(List.of("kill", "-" + signal, String.valueOf(pid)));
        ProcessHandle.of(pid)
                .ifPresent(parent -> parent.descendants().forEach(child -> command.add(String.valueOf(child.pid()))));
        Commands.run(command, Map.of());
    }

    /**
     * SIGQUIT: a JVM prints its threads to its standard output, which is the log. For a process that hangs, before it
     * is stopped: what it waited for is then in the log of a CI run.
     */
    public void threadDump() {
        if (!process.isAlive()) {
            return;
        }
        try {
            new ProcessBuilder("kill", "-QUIT", String.valueOf(process.pid()))
                    .inheritIO()
                    .start()
                    .waitFor();
            await(Duration.ofSeconds(2)); // the dump is written by the JVM itself, asynchronously
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    public boolean await(Duration timeout) {
        try {
            return process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    public int exitValue() {
        return process.exitValue();
    }

    public int waitFor() throws InterruptedException {
        return process.waitFor();
    }

    protected void failIfDead(String waitingFor) {
        if (!process.isAlive()) {
            throw new IllegalStateException(
                    name + " exited with " + process.exitValue() + " while " + waitingFor + "; see " + log);
        }
    }

    @Override
    public void close() {
        stop(Duration.ofSeconds(30));
    }
}

package org.idempotent.stack;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.function.Supplier;

/**
 * Payara Micro with the Artemis RAR and a WAR, configured by server-config/post-boot-commands.asadmin from the
 * environment, in a child JVM.
 */
public final class PayaraMicroProcess extends ChildProcess implements PayaraInstance {

    /**
     * Metaspace a full collection is first due at. The default (about 21 MB) makes the JVM collect the whole heap each
     * time classes are loaded past the last mark: the first purge in a Payara Micro loads its path and stopped every
     * consumer for 137 to 224 ms (the volume benchmark, performance.md). Payara's classes stay under it.
     */
    static final String METASPACE = "-XX:MetaspaceSize=256m";

    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    private final int httpPort;
    /** When the JVM was launched: its own start must be done by {@link #BOOT_HANG} after. */
    private final Instant launched = Instant.now();
    /** Set once the log shows Payara's own start done, so that later waits do not read the log for it again. */
    private volatile boolean ownStartDone;

    private PayaraMicroProcess(
            String name,
            List<String> command,
            Map<String, String> environment,
            Path log,
            boolean showOutput,
            int httpPort)
            throws IOException {
        super(name, command, environment, log, showOutput);
        this.httpPort = httpPort;
    }

    /**
     * No Hazelcast at all: the instances share only the queue and the database, the timers are non-persistent.
     * {@code --nocluster} still starts a Hazelcast instance with clustering off (an empty Payara Micro ready in 4.4 s
     * against 2.5 s), and wins over {@code --nohazelcast} when both are given; a benchmark passes it to measure that.
     */
    private static final String NO_HAZELCAST = "--nohazelcast";

    private static final String CLUSTERING_OFF = "--nocluster";

    /** How long an instance may take to become ready: boot, deployment and the schema migration. */
    public static final Duration READY_TIMEOUT = Duration.ofMinutes(3);

    /** What Payara Micro logs when the WAR's deployment failed at boot. */
    private static final String DEPLOYMENT_FAILED = "Exception while loading the app";
    /** What Payara Micro logs when its own start failed, before any deployment. */
    private static final String SERVER_FAILED = "Server failed to start";
    /**
     * Payara 7 starts its services on four threads by default, and HK2 can deadlock in that: one thread holds the
     * service locator's read lock while it waits for a descriptor another thread reifies, which waits for the read
     * lock behind a queued writer (1 boot in 74 here, two booting at once; none in 197 with this, whose start took
     * 4.1 s against 3.9, medians). docker/start.sh passes the same.
     */
    public static final String SERIAL_STARTUP = "-Dorg.glassfish.startupThreadPolicy=USE_NO_THREADS";
    /** What Payara Micro logs once its own start is done, before the post-boot commands and the deployments. */
    private static final String SERVER_STARTED = "startup time :";
    /**
     * How long Payara Micro's own start may take (10 to 30 s on a busy 2-core machine): Payara Micro 7.2026.11 once
     * hung in it for good, its HK2 run-level threads each waiting for the service locator's lock.
     */
    private static final Duration BOOT_HANG = Duration.ofSeconds(90);

    /**
     * Starts an instance and returns it once ready (see {@link #awaitReady}); one that is not ready within {@link
     * #READY_TIMEOUT} is stopped. Its HTTP port is the setting HTTP_PORT.
     */
    public static PayaraMicroProcess startReady(String name, Settings settings, Path war, String... jvmOptions) {
        return startReady(name, settings, war, List.of(), List.of(jvmOptions));
    }

    /** The same, also running {@code extraCommands} (asadmin) after the product's own post-boot commands. */
    public static PayaraMicroProcess startReady(
            String name, Settings settings, Path war, List<String> extraCommands, List<String> jvmOptions) {
        return startReady(name, settings, war, extraCommands, jvmOptions, () -> ClassDataArchive.next(war));
    }

    /**
     * {@link #startReady(String, Settings, Path, List, List)} for an instance that lives long beside others (the test
     * run's shared one, or one of a class that runs alongside the rest): it maps the class-data-sharing archive if
     * there is one, and never writes it, which it would only do as it exits, keeping every instance started meanwhile
     * from writing one.
     */
    public static PayaraMicroProcess startReadyLongLived(
            String name, Settings settings, Path war, List<String> extraCommands, List<String> jvmOptions) {
        return startReady(name, settings, war, extraCommands, jvmOptions, () -> ClassDataArchive.mapped(war));
    }

    private static PayaraMicroProcess startReady(
            String name,
            Settings settings,
            Path war,
            List<String> extraCommands,
            List<String> jvmOptions,
            Supplier<ClassDataArchive> archive) {
        Supplier<PayaraMicroProcess> attempt = () -> start(
                        name,
                        settings,
                        war,
                        Build.RUNTIME,
                        false,
                        extraCommands,
                        null,
                        jvmOptions,
                        archive.get(),
                        List.of())
                .awaitReady(READY_TIMEOUT);
        try {
            return attempt.get();
        } catch (DeploymentFailed | BootFailed once) {
            // Payara Micro 6.2025.10 now and then fails at boot in its own code: the WAR's deployment (a
            // NullPointerException in NamingResources.addEnvironment, in a clean-clone run of 11005bb as of later
            // commits), after which it serves without it, or the server itself (a ConcurrentModificationException in
            // HK2's run-level services, "Server failed to start", in a clean-clone run of 78d812b), after which it
            // exits; Payara Micro 7.2026.11 once hung in that start (a clean-clone run of 50580f1). A second failure
            // in a row is the test's.
            System.err.printf(
                    "%s: Payara Micro failed at boot, starting it once more (%s)%n",
                    name, once.getMessage().lines().findFirst().orElse(""));
            return attempt.get();
        }
    }

    /** Payara Micro is up, but the deployment of the WAR failed at boot: it will never be ready. */
    public static final class DeploymentFailed extends IllegalStateException {
        DeploymentFailed(String message) {
            super(message);
        }
    }

    /** Payara Micro exited or hung during its own start, before the WAR: "Server failed to start". */
    public static final class BootFailed extends IllegalStateException {
        BootFailed(String message) {
            super(message);
        }
    }

    /** Starts an instance; its HTTP port is the setting HTTP_PORT. */
    public static PayaraMicroProcess start(
            String name, Settings settings, Path war, boolean showOutput, String... jvmOptions) {
        return start(
                name,
                settings,
                war,
                Build.RUNTIME,
                showOutput,
                List.of(),
                null,
                List.of(jvmOptions),
                ClassDataArchive.next(war),
                List.of());
    }

    /** On another JDK's {@code java} binary (null: this JVM's), for a benchmark's side-by-side run. */
    public static PayaraMicroProcess start(
            String name, Settings settings, Path war, boolean showOutput, Path java, List<String> jvmOptions) {
        ClassDataArchive archive = java == null ? ClassDataArchive.next(war) : ClassDataArchive.none();
        return start(name, settings, war, Build.RUNTIME, showOutput, List.of(), java, jvmOptions, archive, List.of());
    }

    /**
     * Another build's Payara Micro, adapter and server libraries ({@code runtime}), on a {@code java} binary (null: this
     * JVM's), for a benchmark's side-by-side run of the product before a change; no class-data-sharing archive.
     */
    public static PayaraMicroProcess start(
            String name, Settings settings, Path war, ServerRuntime runtime, Path java, List<String> jvmOptions) {
        return start(
                name, settings, war, runtime, false, List.of(), java, jvmOptions, ClassDataArchive.none(), List.of());
    }

    /**
     * {@link #start(String, Settings, Path, boolean, Path, List)} on this JVM's {@code java}, with the class-data-sharing
     * archive ({@link ClassDataArchive}) or without, whatever the run's system property says, and with more Payara Micro
     * options after the product's own ({@code --nocluster} replaces the product's {@code --nohazelcast}: a benchmark
     * measures the old way with it).
     */
    public static PayaraMicroProcess start(
            String name,
            Settings settings,
            Path war,
            List<String> jvmOptions,
            boolean sharing,
            List<String> microOptions) {
        ClassDataArchive archive = ClassDataArchive.next(sharing, war);
        return start(name, settings, war, Build.RUNTIME, false, List.of(), null, jvmOptions, archive, microOptions);
    }

    private static PayaraMicroProcess start(
            String name,
            Settings settings,
            Path war,
            ServerRuntime runtime,
            boolean showOutput,
            List<String> extraCommands,
            Path java,
            List<String> jvmOptions,
            ClassDataArchive archive,
            List<String> microOptions) {
        int httpPort = settings.getInt("HTTP_PORT");
        Path work = settings.stackDir().resolve(name);
        try {
            Files.createDirectories(work);
            Path postBoot = Build.POST_BOOT_COMMANDS;
            if (!extraCommands.isEmpty()) {
                postBoot = work.resolve("post-boot-commands.asadmin");
                Files.writeString(
                        postBoot,
                        Files.readString(Build.POST_BOOT_COMMANDS) + "\n" + String.join("\n", extraCommands) + "\n");
            }
            List<String> command = new ArrayList<>();
            command.add(java == null ? java() : java.toString());
            command.add("-Xmx768m");
            // Measured with mvn -Pbench on 2 cores: 8-10 % less CPU per message than G1, 5-9 % more messages/s.
            command.add("-XX:+UseParallelGC");
            command.add(METASPACE);
            command.add(SERIAL_STARTUP);
            // Payara Micro unpacks itself into java.io.tmpdir: one directory per instance, inside the stack dir.
            command.add("-Djava.io.tmpdir=" + work);
            // A JVM crash report lands beside the instance's log, not in the directory Maven runs from.
            command.add("-XX:ErrorFile=" + work.resolve("hs_err_pid%p.log"));
            command.addAll(jvmOptions);
            command.addAll(extraJvmOptions());
            command.addAll(archive.options());
            command.addAll(List.of(
                    "-jar",
                    runtime.payaraMicro().toString(),
                    microOptions.contains(CLUSTERING_OFF) ? CLUSTERING_OFF : NO_HAZELCAST,
                    "--port",
                    String.valueOf(httpPort),
                    "--addlibs",
                    runtime.addLibs(),
                    "--postbootcommandfile",
                    postBoot.toString(),
                    "--deploy",
                    war.toString()));
            command.addAll(microOptions.stream()
                    .filter(option -> !option.equals(CLUSTERING_OFF))
                    .toList());
            if (Boolean.parseBoolean(settings.get("BROKER_SSL_ENABLED"))) {
                command.addAll(List.of(
                        "--systemproperties", brokerTrustStore(work, settings).toString()));
            }
            // Only what differs from the defaults: those live in the post-boot file and the WAR, and a value an
            // administrator sets on the server (domain config) must not be shadowed by an environment variable.
            Map<String, String> environment = new HashMap<>(settings.changedFromDefaults());
            environment.put("ARTEMIS_RAR", runtime.rar().toString());
            // The launcher runs with the development passwords: say so, or readiness stays DOWN for them.
            environment.put("PAYMENTS_DEVELOPMENT", settings.get("PAYMENTS_DEVELOPMENT"));
            environment.put(
                    "ADMIN_PASSWORD_ASADMIN_FILE",
                    adminPasswordFile(work, settings).toString());
            PayaraMicroProcess started;
            try {
                started = new PayaraMicroProcess(
                        name, command, environment, settings.stackDir().resolve(name + ".log"), showOutput, httpPort);
            } catch (IOException e) {
                archive.exited(-1);
                throw e;
            }
            started.whenExited(archive::exited);
            return started;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * The Artemis client trusts the broker through these system properties, which win over the adapter's
     * trustStorePath (and Payara sets javax.net.ssl.trustStore to its own): a file, not -D options, so that the
     * password is not on the command line.
     */
    private static Path brokerTrustStore(Path dir, Settings settings) throws IOException {
        Path file = dir.resolve("broker-tls.properties");
        Properties properties = new Properties();
        properties.setProperty("org.apache.activemq.ssl.trustStore", settings.get("BROKER_TRUSTSTORE"));
        properties.setProperty(
                "org.apache.activemq.ssl.trustStorePassword", settings.get("BROKER_TRUSTSTORE_PASSWORD"));
        properties.setProperty("org.apache.activemq.ssl.trustStoreType", "PKCS12");
        try (var out = Files.newBufferedWriter(file)) {
            properties.store(out, "TLS to the broker");
        }
        return file;
    }

    /** asadmin reads the administrator's password from a file, never from the command line. */
    public static Path adminPasswordFile(Path dir, Settings settings) throws IOException {
        Path file = dir.resolve("admin-password");
        Files.writeString(file, "AS_ADMIN_USERPASSWORD=" + settings.get("ADMIN_PASSWORD") + "\n");
        return file;
    }

    @Override
    public URI uri(String path) {
        return URI.create("http://localhost:" + httpPort + path);
    }

    /**
     * Waits until /health/ready answers UP with the application's own check in it: schema migrated, database and
     * broker reachable. While the WAR is still deploying, Payara answers UP with an empty list of checks. Stops the
     * instance if it is not ready within {@code timeout}.
     */
    public PayaraMicroProcess awaitReady(Duration timeout) {
        return awaitReady(timeout, Duration.ofMillis(100));
    }

    /** {@link #awaitReady(Duration)}, asking every {@code poll} (a benchmark timing the start asks more often). */
    public PayaraMicroProcess awaitReady(Duration timeout, Duration poll) {
        Instant deadline = Instant.now().plus(timeout);
        String last = "no answer";
        while (Instant.now().isBefore(deadline)) {
            failIfFailedAtBoot();
            failIfDead("waiting for /health/ready");
            try {
                HttpResponse<String> response = HTTP.send(
                        HttpRequest.newBuilder(uri("/health/ready"))
                                .timeout(Duration.ofSeconds(5))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
                if (response.statusCode() == 200 && response.body().contains("payment-consumer")) {
                    return this;
                }
                last = response.statusCode() + " " + response.body();
                if (logSinceStart().contains(DEPLOYMENT_FAILED)) {
                    String excerpt = logExcerpt(20);
                    stop(Duration.ofSeconds(30));
                    throw new DeploymentFailed(name() + " answers without the application: " + DEPLOYMENT_FAILED
                            + " (see " + log() + "); " + excerpt);
                }
            } catch (IOException notYet) {
                last = notYet.toString();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted", e);
            }
            try {
                Thread.sleep(poll.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted", e);
            }
        }
        threadDump();
        String excerpt = logExcerpt(20);
        // Nobody holds this process once the caller has the exception: stop it, or it consumes on for ever.
        stop(Duration.ofSeconds(30));
        throw new IllegalStateException(name() + " not ready after " + timeout + " (" + last + "); see " + log()
                + ", which ends with a thread dump; " + excerpt);
    }

    private void failIfFailedAtBoot() {
        try {
            if (await(Duration.ZERO) && logSinceStart().contains(SERVER_FAILED)) {
                throw new BootFailed(
                        name() + " exited at boot: " + SERVER_FAILED + " (see " + log() + "); " + logExcerpt(20));
            }
            if (ownStartDone || Instant.now().isBefore(launched.plus(BOOT_HANG))) {
                return;
            }
            ownStartDone = logSinceStart().contains(SERVER_STARTED);
            if (!ownStartDone) {
                threadDump();
                String excerpt = logExcerpt(20);
                stop(Duration.ofSeconds(30));
                throw new BootFailed(name() + " hung in its own start: no '" + SERVER_STARTED + "' within " + BOOT_HANG
                        + " (see " + log() + ", which ends with a thread dump); " + excerpt);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}

package org.idempotent.stack;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/** What the Maven build puts in target/ for the stack to run: paths relative to the project directory. */
public final class Build {

    public static final Path RUNTIME_DIR = Path.of("target", "runtime").toAbsolutePath();
    public static final Path WAR = Path.of("target", "payment-consumer.war").toAbsolutePath();
    /** This build's Payara Micro, resource adapter and server libraries. */
    public static final ServerRuntime RUNTIME = new ServerRuntime(RUNTIME_DIR);

    public static final Path RAR = RUNTIME.rar();
    public static final Path PAYARA_MICRO = RUNTIME.payaraMicro();
    public static final Path POSTGRESQL_DRIVER = RUNTIME.postgresqlDriver();
    /** The broker plugins' jars, for a broker instance's lib/ (create-instance.sh copies them). */
    public static final Path BROKER_PLUGINS = RUNTIME_DIR.resolve("broker-plugins");

    public static final Path BROKER_INSTANCE_SCRIPT =
            Path.of("server-config", "artemis", "create-instance.sh").toAbsolutePath();
    /** Every setting and its default, the one place they are written (Settings reads it). */
    public static final Path CONFIGURATION =
            Path.of("server-config", "configuration.properties").toAbsolutePath();

    public static final Path POST_BOOT_COMMANDS =
            Path.of("server-config", "post-boot-commands.asadmin").toAbsolutePath();

    private Build() {}

    /** The Artemis broker distribution the build unpacked (pom.xml, artemis.broker.version). */
    public static Path artemisHome() {
        try (Stream<Path> entries = Files.list(RUNTIME_DIR)) {
            List<Path> homes = entries.filter(
                            entry -> entry.getFileName().toString().startsWith("apache-artemis-"))
                    .toList();
            if (homes.size() != 1) {
                throw new IllegalStateException(
                        "expected one Artemis distribution in " + RUNTIME_DIR + " (mvn package), found " + homes);
            }
            return homes.get(0);
        } catch (IOException e) {
            throw new UncheckedIOException("run the build first (mvn package): " + e.getMessage(), e);
        }
    }
}

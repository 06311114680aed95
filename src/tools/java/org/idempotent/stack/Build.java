package org.idempotent.stack;

import java.nio.file.Path;

/** What the Maven build puts in target/ for the stack to run: paths relative to the project directory. */
public final class Build {

    public static final Path RUNTIME_DIR = Path.of("target", "runtime").toAbsolutePath();
    public static final Path WAR = Path.of("target", "payment-consumer.war").toAbsolutePath();
    public static final Path RAR = RUNTIME_DIR.resolve("artemis-ra.rar");
    public static final Path PAYARA_MICRO = RUNTIME_DIR.resolve("payara-micro.jar");
    public static final Path POSTGRESQL_DRIVER = RUNTIME_DIR.resolve("postgresql.jar");
    public static final Path POST_BOOT_COMMANDS = Path.of("server-config", "post-boot-commands.asadmin").toAbsolutePath();

    private Build() {}
}

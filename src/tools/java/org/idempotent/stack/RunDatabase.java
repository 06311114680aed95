package org.idempotent.stack;

import java.io.IOException;
import java.nio.file.Path;

/**
 * The run command's database: the one DB_HOST names when it is given (unchanged, never touched beyond creating the
 * database and roles), else a PostgreSQL of the run's own under STACK_DIR/postgres, made on first use on a free port
 * from 15432 up, kept between runs (a second run finds its ledger) and stopped with the run.
 */
public final class RunDatabase {

    private static final int FIRST_PORT = 15432;

    private RunDatabase() {}

    /** Whether the environment names a database server; then it always wins. */
    public static boolean configured() {
        return System.getenv("DB_HOST") != null;
    }

    public static Path root(Settings settings) {
        return settings.stackDir().resolve("postgres");
    }

    /** Started (made first if missing) for the run command; {@link PostgresCluster#serve} points settings at it. */
    public static PostgresCluster start(Settings settings) throws IOException {
        return PostgresCluster.open(PostgresBinaries.fromBuild(), root(settings), firstFreePort());
    }

    /**
     * For a tool that talks to the running stack (the load generator): the run's own database when DB_HOST is not
     * given and the run command made one, else {@code settings} as they are.
     */
    public static Settings find(Settings settings) {
        if (configured()) {
            return settings;
        }
        return PostgresCluster.portOf(root(settings))
                .map(port -> PostgresCluster.serving(settings, port))
                .orElse(settings);
    }

    private static int firstFreePort() {
        for (int port = FIRST_PORT; port < FIRST_PORT + 100; port++) {
            if (!PostgresCluster.listening("127.0.0.1", port)) {
                return port;
            }
        }
        return 0; // any free port
    }
}

package org.idempotent.stack;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The run command's own PostgreSQL (no DB_HOST given): made from the build's binaries on first use, found by the
 * load generator without flags, kept between runs with its port and its data, never run as root.
 */
class RunDatabaseIT {

    @Test
    void aSecondRunFindsTheFirstRunsLedgerOnTheSamePort() throws Exception {
        Path stack = Build.RUNTIME_DIR.resolveSibling("run-database-it");
        Commands.deleteRecursively(stack);
        Settings settings = Settings.fromEnvironment().with("STACK_DIR", stack.toString());

        PostgresCluster first = RunDatabase.start(settings);
        int port = first.port();
        try {
            Settings served = first.serve(settings);
            Database.ensureExists(served);
            try (Connection connection = Database.connect(served);
                    Statement statement = connection.createStatement()) {
                statement.execute("CREATE TABLE kept (balance bigint)");
                statement.execute("INSERT INTO kept VALUES (1250)");
            }
            assertThat(serverUser(first))
                    .as("PostgreSQL refuses root; run as root, the server runs as another user")
                    .isEqualTo(PostgresBinaries.serverUser())
                    .isNotEqualTo("root");
        } finally {
            first.stop();
        }
        assertThat(PostgresCluster.listening("127.0.0.1", port))
                .as("stopped with the run")
                .isFalse();

        assertThat(RunDatabase.find(settings).get("DB_PORT"))
                .as("the load generator's settings, with no flags")
                .isEqualTo(String.valueOf(port));
        PostgresCluster second = RunDatabase.start(settings);
        try {
            assertThat(second.port()).isEqualTo(port);
            try (Connection connection = Database.connect(second.serve(settings));
                    Statement statement = connection.createStatement();
                    ResultSet row = statement.executeQuery("SELECT balance FROM kept")) {
                assertThat(row.next()).isTrue();
                assertThat(row.getLong(1)).isEqualTo(1250);
            }
        } finally {
            second.stop();
        }
    }

    private static String serverUser(PostgresCluster cluster) {
        return Commands.run(List.of("ps", "-o", "user=", "-p", String.valueOf(cluster.postmasterPid())), Map.of())
                .strip();
    }
}

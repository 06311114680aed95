package org.idempotent.schema;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.UUID;
import org.idempotent.stack.Database;
import org.idempotent.stack.Settings;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The application connects as a role that may read and write rows and nothing else (server-config/database-roles.sql);
 * the schema is the owner's, whose migrations keep the application's rights on every table they add.
 */
class DatabaseRolesIT {

    private static final String INSUFFICIENT_PRIVILEGE = "42501";
    private static final Settings SETTINGS = Settings.fromEnvironment().with("DB_NAME", "payments_it_roles");

    @BeforeAll
    static void migratedByTheOwner() throws SQLException {
        Database.recreate(SETTINGS);
        Database.migrate(SETTINGS, "filesystem:src/main/resources/db/migration", null);
    }

    @Test
    void theApplicationRoleReadsAndWritesRows() throws SQLException {
        try (Connection app = Database.connectAsApplication(SETTINGS);
                Statement sql = app.createStatement()) {
            sql.executeUpdate("INSERT INTO processed_events (event_id, processed_at, id_version) VALUES ('"
                    + UUID.randomUUID() + "', now(), 4)");
            assertThat(sql.executeUpdate("DELETE FROM processed_events")).isEqualTo(1);
        }
    }

    @Test
    void theApplicationRoleCannotDropAlterTruncateOrCreate() throws SQLException {
        try (Connection app = Database.connectAsApplication(SETTINGS)) {
            assertThat(app.getMetaData().getUserName()).isEqualTo(SETTINGS.get("DB_USER"));
            for (String ddl : new String[] {
                "DROP TABLE processed_events",
                "ALTER TABLE processed_events ADD COLUMN x int",
                "TRUNCATE processed_events",
                "CREATE TABLE intruder (id int)",
                "DROP SCHEMA public CASCADE"
            }) {
                assertThatThrownBy(() -> {
                            try (Statement sql = app.createStatement()) {
                                sql.execute(ddl);
                            }
                        })
                        .as(ddl)
                        .isInstanceOf(SQLException.class)
                        .satisfies(e -> assertThat(((SQLException) e).getSQLState())
                                .as(ddl)
                                .isEqualTo(INSUFFICIENT_PRIVILEGE));
            }
        }
    }

    @Test
    void aTableALaterMigrationAddsIsTheApplicationsToUseAtOnce() throws SQLException {
        try (Connection owner = Database.connect(SETTINGS);
                Statement sql = owner.createStatement()) {
            sql.execute("CREATE TABLE later_migration (id bigserial PRIMARY KEY, note text)");
        }
        try (Connection app = Database.connectAsApplication(SETTINGS);
                Statement sql = app.createStatement()) {
            assertThat(sql.executeUpdate("INSERT INTO later_migration (note) VALUES ('from the application')"))
                    .isEqualTo(1);
        }
    }
}

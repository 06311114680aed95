package org.idempotent.stack;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import java.util.regex.Pattern;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.configuration.FluentConfiguration;
import org.flywaydb.database.postgresql.PostgreSQLConfigurationExtension;
import org.idempotent.schema.entity.DedupLayout;

/**
 * Creates the configured database if it is missing and applies server-config/database-roles.sql to it (the owner
 * and the application's role); the schema inside belongs to the application (Flyway). The tools connect as the
 * owner (DB_OWNER_USER), as the tests must to reset what the application may not.
 */
public final class Database {

    private static final Pattern PLAIN_NAME = Pattern.compile("[a-z_][a-z0-9_]{0,62}");

    public static final Path ROLES = Path.of("server-config", "database-roles.sql");

    private Database() {}

    public static void ensureExists(Settings settings) throws SQLException {
        String name = plainName(settings);
        try (Connection connection = maintenance(settings);
                PreparedStatement exists = connection.prepareStatement("SELECT 1 FROM pg_database WHERE datname = ?")) {
            exists.setString(1, name);
            boolean missing;
            try (ResultSet row = exists.executeQuery()) {
                missing = !row.next();
            }
            if (missing) {
                try (Statement create = connection.createStatement()) {
                    // An identifier cannot be a bind parameter; plainName checked it against PLAIN_NAME.
                    create.execute("CREATE DATABASE " + name);
                }
            }
        }
        applyRoles(settings);
    }

    private static void applyRoles(Settings settings) throws SQLException {
        try (Connection connection = connect(settings);
                PreparedStatement set = connection.prepareStatement("SELECT set_config(?, ?, false)")) {
            for (String[] setting : new String[][] {
                {"payments.owner", "DB_OWNER_USER"},
                {"payments.owner_password", "DB_OWNER_PASSWORD"},
                {"payments.app", "DB_USER"},
                {"payments.app_password", "DB_PASSWORD"}
            }) {
                set.setString(1, setting[0]);
                set.setString(2, settings.get(setting[1]));
                set.execute();
            }
            try (Statement roles = connection.createStatement()) {
                // The repository's own file, not input: it takes its values from the settings above.
                roles.execute(Files.readString(ROLES));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Drops DB_NAME (closing its sessions) and creates it empty: for tests that need a fresh database. */
    public static void recreate(Settings settings) throws SQLException {
        String name = plainName(settings);
        try (Connection connection = maintenance(settings);
                Statement drop = connection.createStatement()) {
            drop.execute("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
        }
        ensureExists(settings);
    }

    private static Connection maintenance(Settings settings) throws SQLException {
        return DriverManager.getConnection(
                settings.jdbcUrl("postgres"), settings.get("DB_OWNER_USER"), settings.get("DB_OWNER_PASSWORD"));
    }

    private static String plainName(Settings settings) {
        String name = settings.get("DB_NAME");
        if (!PLAIN_NAME.matcher(name).matches()) {
            throw new IllegalArgumentException(
                    "DB_NAME must be a plain lower-case identifier to be created here: " + name);
        }
        return name;
    }

    /**
     * Migrates DB_NAME as its owner from the migrations at {@code location} (a Flyway location) to {@code target}, or
     * the latest when null, with the layout DEDUP_PARTITIONING says; as SchemaMigration does, under a session lock: a
     * transactional lock would make CREATE INDEX CONCURRENTLY wait for ever.
     */
    public static void migrate(Settings settings, String location, String target) {
        migrate(
                settings,
                location,
                target,
                DedupLayout.of(settings.get("DEDUP_PARTITIONING")).placeholders());
    }

    /** As above, with the migrations' placeholders given: those of a layout this version no longer installs. */
    public static void migrate(Settings settings, String location, String target, Map<String, String> placeholders) {
        FluentConfiguration flyway = Flyway.configure(Database.class.getClassLoader())
                .dataSource(settings.jdbcUrl(), settings.get("DB_OWNER_USER"), settings.get("DB_OWNER_PASSWORD"))
                .locations(location)
                .placeholders(placeholders);
        if (target != null) {
            flyway.target(target);
        }
        flyway.getConfigurationExtension(PostgreSQLConfigurationExtension.class).setTransactionalLock(false);
        flyway.load().migrate();
    }

    /** As the owner. */
    public static Connection connect(Settings settings) throws SQLException {
        return DriverManager.getConnection(
                settings.jdbcUrl(), settings.get("DB_OWNER_USER"), settings.get("DB_OWNER_PASSWORD"));
    }

    /** As the application's role (DB_USER), for checks of what it may do. */
    public static Connection connectAsApplication(Settings settings) throws SQLException {
        return DriverManager.getConnection(settings.jdbcUrl(), settings.get("DB_USER"), settings.get("DB_PASSWORD"));
    }
}

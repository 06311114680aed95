package org.idempotent.stack;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.regex.Pattern;

/** Creates the configured database if it is missing; the schema inside it belongs to the application (Flyway). */
public final class Database {

    private static final Pattern PLAIN_NAME = Pattern.compile("[a-z_][a-z0-9_]{0,62}");

    private Database() {}

    public static void ensureExists(Settings settings) throws SQLException {
        String name = plainName(settings);
        try (Connection connection = maintenance(settings);
                PreparedStatement exists = connection.prepareStatement("SELECT 1 FROM pg_database WHERE datname = ?")) {
            exists.setString(1, name);
            try (ResultSet row = exists.executeQuery()) {
                if (row.next()) {
                    return;
                }
            }
            try (Statement create = connection.createStatement()) {
                // An identifier cannot be a bind parameter; plainName checked it against PLAIN_NAME.
                create.execute("CREATE DATABASE " + name);
            }
        }
    }

    /** Drops DB_NAME (closing its sessions) and creates it empty: for tests that need a fresh database. */
    public static void recreate(Settings settings) throws SQLException {
        String name = plainName(settings);
        try (Connection connection = maintenance(settings); Statement drop = connection.createStatement()) {
            drop.execute("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
        }
        ensureExists(settings);
    }

    private static Connection maintenance(Settings settings) throws SQLException {
        String url = "jdbc:postgresql://" + settings.get("DB_HOST") + ":" + settings.get("DB_PORT") + "/postgres";
        return DriverManager.getConnection(url, settings.get("DB_USER"), settings.get("DB_PASSWORD"));
    }

    private static String plainName(Settings settings) {
        String name = settings.get("DB_NAME");
        if (!PLAIN_NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("DB_NAME must be a plain lower-case identifier to be created here: " + name);
        }
        return name;
    }

    public static Connection connect(Settings settings) throws SQLException {
        return DriverManager.getConnection(settings.jdbcUrl(), settings.get("DB_USER"), settings.get("DB_PASSWORD"));
    }
}

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
        String name = settings.get("DB_NAME");
        if (!PLAIN_NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("DB_NAME must be a plain lower-case identifier to be created here: " + name);
        }
        String maintenance = "jdbc:postgresql://" + settings.get("DB_HOST") + ":" + settings.get("DB_PORT") + "/postgres";
        try (Connection connection = DriverManager.getConnection(maintenance, settings.get("DB_USER"), settings.get("DB_PASSWORD"));
                PreparedStatement exists = connection.prepareStatement("SELECT 1 FROM pg_database WHERE datname = ?")) {
            exists.setString(1, name);
            try (ResultSet row = exists.executeQuery()) {
                if (row.next()) {
                    return;
                }
            }
            try (Statement create = connection.createStatement()) {
                // An identifier cannot be a bind parameter; the name was checked against PLAIN_NAME above.
                create.execute("CREATE DATABASE " + name);
            }
        }
    }

    public static Connection connect(Settings settings) throws SQLException {
        return DriverManager.getConnection(settings.jdbcUrl(), settings.get("DB_USER"), settings.get("DB_PASSWORD"));
    }
}

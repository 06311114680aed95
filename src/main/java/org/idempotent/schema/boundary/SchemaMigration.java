package org.idempotent.schema.boundary;

import jakarta.annotation.PostConstruct;
import jakarta.annotation.Resource;
import jakarta.ejb.Lock;
import jakarta.ejb.LockType;
import jakarta.ejb.Singleton;
import jakarta.ejb.Startup;
import jakarta.ejb.TransactionManagement;
import jakarta.ejb.TransactionManagementType;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Map;
import java.util.logging.Level;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.configuration.FluentConfiguration;
import org.flywaydb.core.api.output.MigrateResult;
import org.flywaydb.database.postgresql.PostgreSQLConfigurationExtension;
import org.idempotent.Resources;

/**
 * Brings the schema to the version this WAR needs, before any message is consumed.
 *
 * <p>{@code @Startup} alone does not order it before message delivery: the container may activate the MDB endpoints
 * first. Consumers therefore call {@link #awaitMigrated()} before their first message; the container does not
 * dispatch a call to a singleton until its {@code @PostConstruct} has completed.
 */
@Startup
@Singleton
@TransactionManagement(TransactionManagementType.BEAN)
public class SchemaMigration {

    /**
     * How processed_events is laid out when the schema is installed: {@code none}, one table whose rows the purge
     * deletes in batches, or {@code week}, partitioned by the week each event occurred, whose weeks the purge drops
     * whole (V8__processed_events_by_week.sql). Read by the migration only: an installed table keeps its layout until
     * its owner converts it.
     */
    public static final String DEDUP_PARTITIONING = "DEDUP_PARTITIONING";

    static final String PARTITIONED =
            "SELECT EXISTS (SELECT FROM pg_partitioned_table WHERE partrelid = 'processed_events'::regclass)";

    private static final Logger LOG = Logger.getLogger(SchemaMigration.class.getName());

    @Resource(lookup = Resources.OWNER_DATA_SOURCE)
    DataSource dataSource;

    @Inject
    @ConfigProperty(name = DEDUP_PARTITIONING)
    String partitioning;

    private volatile String version;
    private volatile boolean dedupByWeek;

    @PostConstruct
    void migrate() {
        FluentConfiguration configuration = Flyway.configure(SchemaMigration.class.getClassLoader())
                .dataSource(dataSource)
                .locations("classpath:db/migration")
                .placeholders(Map.of("dedupPartitioning", partitioning));
        // Flyway's default transactional lock keeps a transaction open for the whole migration, which a
        // CREATE INDEX CONCURRENTLY waits for forever: take the session-level advisory lock instead.
        configuration
                .getConfigurationExtension(PostgreSQLConfigurationExtension.class)
                .setTransactionalLock(false);
        MigrateResult result = configuration.load().migrate();
        version = result.targetSchemaVersion != null ? result.targetSchemaVersion : result.initialSchemaVersion;
        dedupByWeek = partitionedByWeek();
        LOG.log(Level.INFO, "Schema at version {0} ({1} migrations applied); processed_events {2}", new Object[] {
            version, result.migrationsExecuted, dedupByWeek ? "partitioned by week" : "not partitioned"
        });
        if (dedupByWeek != "week".equals(partitioning)) {
            LOG.log(
                    Level.WARNING,
                    "{0}={1}, but processed_events is {2}: the layout is chosen when the schema is "
                            + "installed; an installed table is converted by its owner (operations.md)",
                    new Object[] {
                        DEDUP_PARTITIONING, partitioning, dedupByWeek ? "partitioned by week" : "not partitioned"
                    });
        }
    }

    private boolean partitionedByWeek() {
        try (Connection connection = dataSource.getConnection();
                PreparedStatement query = connection.prepareStatement(PARTITIONED);
                ResultSet row = query.executeQuery()) {
            row.next();
            return row.getBoolean(1);
        } catch (SQLException e) {
            throw new IllegalStateException("processed_events' layout cannot be read: " + e.getMessage(), e);
        }
    }

    /** Whether processed_events is partitioned by week; read after the migration: a conversion needs a restart. */
    @Lock(LockType.READ)
    public boolean dedupByWeek() {
        return dedupByWeek;
    }

    /** Returns once the schema is migrated; blocks a caller that arrives while the migration is still running. */
    @Lock(LockType.READ)
    public String awaitMigrated() {
        return version;
    }
}

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
import java.util.logging.Level;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.configuration.FluentConfiguration;
import org.flywaydb.core.api.output.MigrateResult;
import org.flywaydb.database.postgresql.PostgreSQLConfigurationExtension;
import org.idempotent.Resources;
import org.idempotent.schema.entity.DedupLayout;

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
     * How processed_events is laid out when the schema is installed ({@link DedupLayout}): {@code none} (shipped),
     * one table whose rows the purge deletes in batches; {@code id}, partitioned by the event ID, whose days of v7 IDs
     * the purge drops whole (V12__processed_events_by_id.sql). Read by the migration only: an installed table keeps
     * its layout until its owner converts it, except a table by week (retired), which the migration converts to the
     * layout this names (V14__dedup_week_retired.sql).
     */
    public static final String DEDUP_PARTITIONING = "DEDUP_PARTITIONING";

    /** The layout as the catalog has it: how processed_events is partitioned, if it is. */
    static final String LAYOUT = """
            SELECT p.partstrat::text FROM pg_class c LEFT JOIN pg_partitioned_table p ON p.partrelid = c.oid
             WHERE c.oid = 'processed_events'::regclass""";

    private static final Logger LOG = Logger.getLogger(SchemaMigration.class.getName());

    @Resource(lookup = Resources.OWNER_DATA_SOURCE)
    DataSource dataSource;

    @Inject
    @ConfigProperty(name = DEDUP_PARTITIONING)
    String partitioning;

    private volatile String version;
    private volatile DedupLayout layout;

    @PostConstruct
    void migrate() {
        DedupLayout configured = DedupLayout.of(partitioning);
        FluentConfiguration configuration = Flyway.configure(SchemaMigration.class.getClassLoader())
                .dataSource(dataSource)
                .locations("classpath:db/migration")
                .placeholders(configured.placeholders());
        // Flyway's default transactional lock keeps a transaction open for the whole migration, which a
        // CREATE INDEX CONCURRENTLY waits for forever: take the session-level advisory lock instead.
        configuration
                .getConfigurationExtension(PostgreSQLConfigurationExtension.class)
                .setTransactionalLock(false);
        MigrateResult result = configuration.load().migrate();
        version = result.targetSchemaVersion != null ? result.targetSchemaVersion : result.initialSchemaVersion;
        layout = installedLayout();
        LOG.log(Level.INFO, "Schema at version {0} ({1} migrations applied); processed_events {2}", new Object[] {
            version, result.migrationsExecuted, layout.description()
        });
        if (layout != configured) {
            LOG.log(
                    Level.WARNING,
                    "{0}={1}, but processed_events is {2}: the layout is chosen when the schema is "
                            + "installed; an installed table is converted by its owner (operations.md)",
                    new Object[] {DEDUP_PARTITIONING, partitioning, layout.description()});
        }
    }

    private DedupLayout installedLayout() {
        try (Connection connection = dataSource.getConnection();
                PreparedStatement query = connection.prepareStatement(LAYOUT);
                ResultSet row = query.executeQuery()) {
            row.next();
            return DedupLayout.ofPartitionStrategy(row.getString(1));
        } catch (SQLException e) {
            throw new IllegalStateException("processed_events' layout cannot be read: " + e.getMessage(), e);
        }
    }

    /** processed_events' layout as installed; read after the migration: a conversion needs a restart. */
    @Lock(LockType.READ)
    public DedupLayout dedupLayout() {
        return layout;
    }

    /** Returns once the schema is migrated; blocks a caller that arrives while the migration is still running. */
    @Lock(LockType.READ)
    public String awaitMigrated() {
        return version;
    }
}

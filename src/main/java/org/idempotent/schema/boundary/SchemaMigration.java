package org.idempotent.schema.boundary;

import jakarta.annotation.PostConstruct;
import jakarta.annotation.Resource;
import jakarta.ejb.Lock;
import jakarta.ejb.LockType;
import jakarta.ejb.Singleton;
import jakarta.ejb.Startup;
import jakarta.ejb.TransactionManagement;
import jakarta.ejb.TransactionManagementType;
import java.util.logging.Level;
import java.util.logging.Logger;
import javax.sql.DataSource;
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

    private static final Logger LOG = Logger.getLogger(SchemaMigration.class.getName());

    @Resource(lookup = Resources.OWNER_DATA_SOURCE)
    DataSource dataSource;

    private volatile String version;

    @PostConstruct
    void migrate() {
        FluentConfiguration configuration = Flyway.configure(SchemaMigration.class.getClassLoader())
                .dataSource(dataSource)
                .locations("classpath:db/migration");
        // Flyway's default transactional lock keeps a transaction open for the whole migration, which a
        // CREATE INDEX CONCURRENTLY waits for forever: take the session-level advisory lock instead.
        configuration
                .getConfigurationExtension(PostgreSQLConfigurationExtension.class)
                .setTransactionalLock(false);
        MigrateResult result = configuration.load().migrate();
        version = result.targetSchemaVersion != null ? result.targetSchemaVersion : result.initialSchemaVersion;
        LOG.log(Level.INFO, "Schema at version {0} ({1} migrations applied)", new Object[] {
            version, result.migrationsExecuted
        });
    }

    /** Returns once the schema is migrated; blocks a caller that arrives while the migration is still running. */
    @Lock(LockType.READ)
    public String awaitMigrated() {
        return version;
    }
}

package org.idempotent;

/**
 * The server resources the application looks up, each created by server-config/post-boot-commands.asadmin (Payara
 * Micro) or server-config/setup-payara-server.sh (Payara Server): their JNDI names, declared once for every feature.
 */
public final class Resources {

    /** The JDBC resource of the non-XA PostgreSQL pool, as the application's own role. */
    public static final String DATA_SOURCE = "jdbc/payments";
    /** The schema owner's pool: Flyway changes the schema, which the application's role may not. */
    public static final String OWNER_DATA_SOURCE = "jdbc/payments-owner";
    /** The outbound connection factory of the Artemis resource adapter (dead letters, announcements, readiness). */
    public static final String CONNECTION_FACTORY = "jms/paymentsConnectionFactory";

    private Resources() {}
}

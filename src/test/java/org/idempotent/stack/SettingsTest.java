package org.idempotent.stack;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.apache.activemq.artemis.jms.client.ActiveMQConnectionFactory;
import org.junit.jupiter.api.Test;

/** The launcher's and the tests' view of the configuration (server-config/configuration.properties). */
class SettingsTest {

    @Test
    void aStandbyIsItsPrimaryUntilItIsSetApart() {
        Settings one = Settings.fromEnvironment().with("DB_HOST", "db-1").with("BROKER_HOST", "broker-1");

        assertThat(one.get("DB_STANDBY_HOST")).isEqualTo("db-1");
        assertThat(one.get("BROKER_BACKUP_HOST")).isEqualTo("broker-1");
        assertThat(one.with("DB_STANDBY_HOST", "db-2").get("DB_STANDBY_HOST")).isEqualTo("db-2");
        assertThat(one.changedFromDefaults()).containsEntry("DB_STANDBY_HOST", "db-1");
    }

    @Test
    void theJdbcUrlNamesEachServerOncePrimaryFirst() {
        Settings one = Settings.fromEnvironment()
                .with("DB_HOST", "db-1")
                .with("DB_PORT", "5432")
                .with("DB_NAME", "payments");

        assertThat(one.jdbcUrl()).startsWith("jdbc:postgresql://db-1:5432/payments?targetServerType=primary&");
        assertThat(one.with("DB_STANDBY_HOST", "db-2").jdbcUrl())
                .startsWith("jdbc:postgresql://db-1:5432,db-2:5432/payments?targetServerType=primary&");
        assertThat(one.with("DB_STANDBY_PORT", "5433").jdbcUrl("postgres"))
                .startsWith("jdbc:postgresql://db-1:5432,db-1:5433/postgres?targetServerType=primary&");
    }

    @Test
    void theJdbcUrlSpeaksTlsAsConfigured() {
        Settings verified = Settings.fromEnvironment()
                .with("DB_SSL_MODE", "verify-full")
                .with("DB_SSL_ROOT_CERT", "/etc/payments/ca 1.crt");

        assertThat(Settings.fromEnvironment().jdbcUrl())
                .endsWith("&sslmode=prefer&sslrootcert=%2Fetc%2Fssl%2Fcerts%2Fca-certificates.crt");
        assertThat(verified.jdbcUrl()).endsWith("&sslmode=verify-full&sslrootcert=%2Fetc%2Fpayments%2Fca+1.crt");
    }

    @Test
    void aListingUrlStartsOnTheBrokerItNamesFirstAndGoesOnToTheOther() {
        Settings pair = Settings.fromEnvironment()
                .with("BROKER_HOST", "node-a")
                .with("BROKER_PORT", "61001")
                .with("BROKER_BACKUP_HOST", "node-b")
                .with("BROKER_BACKUP_PORT", "61002");

        try (ActiveMQConnectionFactory backupFirst = new ActiveMQConnectionFactory(pair.brokerHaUrlListing(true))) {
            var locator = backupFirst.getServerLocator();
            assertThat(locator.getStaticTransportConfigurations())
                    .extracting(connector -> connector.getParams().get("host"))
                    .containsExactly("node-b", "node-a");
            assertThat(locator.getConnectionLoadBalancingPolicyClassName()).isEqualTo(ListedOrder.class.getName());
        }
        ListedOrder order = new ListedOrder();
        assertThat(List.of(order.select(2), order.select(2), order.select(2))).containsExactly(0, 1, 0);
    }

    @Test
    void anUnknownKeyIsRefusedNotIgnored() {
        assertThatThrownBy(() -> Settings.fromEnvironment().with("RETENTION_DAZE", "14"))
                .hasMessageContaining("unknown setting RETENTION_DAZE");
    }

    @Test
    void theRunCommandAndTheTestsAreDevelopmentAndNothingElseIs() {
        assertThat(Settings.configuration()).containsEntry("PAYMENTS_DEVELOPMENT", "false");
        assertThat(Settings.defaults()).containsEntry("PAYMENTS_DEVELOPMENT", "true");
    }
}
